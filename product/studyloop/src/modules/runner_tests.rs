//! The phase runner against hostile scripts: a daemon that leaves the
//! process group, 1 GB of output, a hang past the timeout, the environment it
//! sees, and the consent prompt.

use std::io::Cursor;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::drill::{Plan, consent};
use super::error::ModuleError;
use super::runner::{self, ATTEMPT_VAR, MAX_OUTPUT};

pub(crate) fn plan_for(
    dir: &Path,
    phase: &'static str,
    script: &str,
    timeout_seconds: u64,
) -> Plan {
    // As installed: `<snapshot>/scripts/<phase>.sh` (the snapshot is bound
    // into the phase's view, read-only).
    let scripts = dir.join("snapshot/scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    let path = scripts.join(format!("{phase}.sh"));
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    Plan {
        module: "m".into(),
        drill: format!("m/d/{}", crate::ids::random_hex(4)),
        phase,
        argv: vec![path.display().to_string(), "literal; not a shell".into()],
        script_sha256: String::new(),
        timeout_seconds,
        prerequisites: Vec::new(),
        target: "workdir".into(),
        prompt: "p".into(),
        hidden: Vec::new(),
    }
}

#[test]
fn the_phase_sees_only_its_scratch_environment_and_literal_argv() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_for(
        dir.path(),
        "check",
        "#!/bin/sh\nprintf 'arg=%s\\n' \"$1\"\npwd\nenv | sort\n",
        10,
    );
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    assert_eq!(o.code, Some(0));
    let home = a.dir.join("home").display().to_string();
    let mut want = vec![
        format!("HOME={home}"),
        "LANG=C.UTF-8".to_owned(),
        "PATH=/usr/bin:/bin".to_owned(),
        format!("PWD={}", a.dir.join("work").display()),
        format!("STUDYLOOP_ATTEMPT_ID={}", a.id),
        format!("STUDYLOOP_DRILL_ID={}", plan.drill),
        "STUDYLOOP_MODULE_ID=m".to_owned(),
        format!("TMPDIR={}", a.dir.join("tmp").display()),
    ];
    want.sort();
    let env: Vec<&str> = o
        .output
        .lines()
        .skip(2)
        .filter(|l| !l.starts_with("SHLVL=") && !l.starts_with("_="))
        .collect();
    assert_eq!(env, want, "{}", o.output);
    assert!(
        o.output.starts_with("arg=literal; not a shell\n"),
        "{}",
        o.output
    );
    // The attempt's output is kept in the attempt only; cleanup's close removes it.
    assert!(a.dir.join("check.log").is_file());
    runner::close(&a).unwrap();
    assert!(!a.dir.exists());
}

#[test]
fn a_daemon_that_left_the_group_does_not_survive_the_phase() {
    // The daemon is found by its argv: a pid file outside the attempt can no
    // longer be written (modules::sandbox), and its pid inside the phase's
    // PID namespace is not a host pid.
    let dir = tempfile::tempdir().unwrap();
    let t = super::contain_tests::token();
    let script = format!(
        "#!/bin/sh\nsetsid sh -c 'exec sleep {t}' </dev/null >/dev/null 2>&1 &\nsleep 0.3\necho started\n"
    );
    let plan = plan_for(dir.path(), "setup", &script, 10);
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    assert_eq!(o.code, Some(0), "{}", o.output);
    assert!(o.stopped.is_some_and(|n| n >= 1), "nothing was stopped");
    assert_eq!(
        super::contain_tests::survivors(&t),
        Vec::<i32>::new(),
        "the daemon survived"
    );
    assert!(crate::procs::with_env(ATTEMPT_VAR, &a.id).is_empty());
}

/// This process's peak resident set (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_gigabyte_of_output_is_capped_and_a_hang_is_a_timeout_error() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_for(
        dir.path(),
        "check",
        "#!/bin/sh\nhead -c 1073741824 /dev/zero | tr '\\0' x\nexit 1\n",
        60,
    );
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let before = peak_rss_kib();
    let o = runner::run(&plan, &a).unwrap();
    // Bounded memory: the gigabyte is read and dropped, never held.
    let grew = peak_rss_kib().saturating_sub(before);
    assert!(grew < 64 * 1024, "the peak RSS grew by {grew} KiB");
    assert_eq!(o.code, Some(1));
    assert!(o.truncated);
    assert!(o.output.len() <= MAX_OUTPUT, "{}", o.output.len());
    assert!(std::fs::metadata(a.dir.join("check.log")).unwrap().len() <= MAX_OUTPUT as u64);

    let plan = plan_for(
        dir.path(),
        "check",
        "#!/bin/sh\necho before\nexec sleep 300\n",
        1,
    );
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let started = Instant::now();
    let o = runner::run(&plan, &a).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(o.timed_out && o.code.is_none());
    assert_eq!(o.output, "before\n");
}

#[test]
fn secrets_in_the_output_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");
    let plan = plan_for(
        dir.path(),
        "check",
        &format!("#!/bin/sh\necho token={token}\n"),
        10,
    );
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    assert!(!o.output.contains(&token), "{}", o.output);
    assert!(
        !std::fs::read_to_string(a.dir.join("check.log"))
            .unwrap()
            .contains(&token)
    );
}

#[test]
fn consent_is_the_typed_word_yes_on_a_terminal_only() {
    let ask = |tty: bool, answer: &str| {
        consent(
            tty,
            &mut Cursor::new(answer.as_bytes().to_vec()),
            &mut Vec::new(),
        )
    };
    assert!(matches!(
        ask(false, "yes\n"),
        Err(ModuleError::NotATerminal)
    ));
    assert!(ask(true, "yes\n").unwrap());
    for no in [
        "y\n",
        "YES\n",
        "",
        "no\n",
        "yes please\n",
        &format!("{}yes\n", " ".repeat(100)),
    ] {
        assert!(!ask(true, no).unwrap(), "{no:?} consented");
    }
}

#[test]
fn home_tmp_and_cwd_writes_land_in_the_attempt_and_go_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_for(
        dir.path(),
        "setup",
        "#!/bin/sh\nset -e\necho h > \"$HOME/.profile\"\necho t > \"$TMPDIR/t\"\necho w > w\nmkdir -p \"$HOME/.kube\"\n",
        10,
    );
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    assert_eq!(o.code, Some(0), "{}", o.output);
    for f in ["home/.profile", "tmp/t", "work/w", "home/.kube"] {
        assert!(a.dir.join(f).exists(), "{f} not in the attempt");
    }
    // A later setup starts a fresh attempt: nothing of the old one is left.
    let again = runner::attempt(dir.path(), &plan).unwrap();
    assert_ne!(again.id, a.id);
    assert!(!again.dir.join("home/.profile").exists());
    runner::close(&again).unwrap();
    assert!(!again.dir.exists());
}

/// A modules dir reached through `..` (a HOME or config dir under a link or
/// spelled with `..`) still gives the phase paths that exist in its view.
#[test]
fn the_attempt_dir_is_canonical_whatever_the_modules_dir_spelling() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let plan = plan_for(dir.path(), "setup", "#!/bin/sh\nexit 0\n", 10);
    let spelled = dir.path().join("sub/..");
    let a = runner::attempt(&spelled, &plan).unwrap();
    assert!(
        !a.dir
            .components()
            .any(|c| c == std::path::Component::ParentDir),
        "{}",
        a.dir.display()
    );
    assert_eq!(a.dir, a.dir.canonicalize().unwrap());
    runner::close(&a).unwrap();
}
