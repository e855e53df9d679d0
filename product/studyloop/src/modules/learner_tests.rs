//! The drill sandbox as a learner meets it: `studyloop drill` run by a
//! non-root user (uid 1000, re-executed through `setpriv` when CI runs as
//! root) from a working directory inside a hidden directory, with a secret in
//! its environment, one in its cwd, one in a sibling dot-directory
//! (`../.ssh`) and descriptors it holds open. A check script must recover
//! none of them (through its init's `/proc/1/environ` and `/proc/1/cwd`, by
//! absolute path, or through an inherited descriptor), whatever encoding it
//! uses to pass the redactor (hex here, checked against a control file the
//! phase may read), and its disk writes end at the attempt's bound.

use std::os::fd::AsRawFd as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use super::contain_tests::visible_scratch;
use super::runner;
use super::runner_tests::plan_for;
use super::usage::{MAX_ATTEMPT_BYTES, Watch};

/// The uid/gid of the learner CI re-executes as.
const LEARNER: u32 = 1000;

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The learner's files: `<scratch>/.hidden/proj` (the cwd, holding `notes`)
/// and `<scratch>/.hidden/.ssh/id`, owned by `uid`, 0600.
struct Learner {
    _root: tempfile::TempDir,
    cwd: PathBuf,
    hidden: PathBuf,
}

fn learner_files(uid: u32, notes: &str, key: &str) -> Learner {
    let root = tempfile::tempdir_in(visible_scratch()).unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let hidden = root.path().join(".hidden");
    let cwd = hidden.join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(hidden.join(".ssh")).unwrap();
    for (f, text) in [(cwd.join("notes"), notes), (hidden.join(".ssh/id"), key)] {
        std::fs::write(&f, text).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    for p in [
        &hidden,
        &cwd,
        &hidden.join(".ssh"),
        &cwd.join("notes"),
        &hidden.join(".ssh/id"),
    ] {
        std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
    }
    Learner {
        _root: root,
        cwd,
        hidden,
    }
}

/// Runs the ignored test `inner` of this module again from a cwd inside a
/// hidden directory, with `CANARY_ENV` in its environment: as the caller,
/// and (as root) as uid [`LEARNER`]. Returns each run's output.
fn as_learner(inner: &str) -> Vec<String> {
    let me = rustix::process::geteuid().as_raw();
    let mut runs = vec![me];
    if me == 0 {
        runs.push(LEARNER);
    } else {
        eprintln!("skip: the uid {LEARNER} re-run needs root (setpriv); ran as uid {me} only");
    }
    let exe = std::env::current_exe().unwrap();
    let name = format!("modules::learner_tests::{inner}");
    let mut texts = Vec::new();
    for uid in runs {
        let tag = crate::ids::random_hex(8);
        let files = learner_files(uid, &format!("NOTES-{tag}"), &format!("SSHKEY-{tag}"));
        let mut c = if uid == me {
            std::process::Command::new(&exe)
        } else {
            let mut c = std::process::Command::new("setpriv");
            c.args([
                format!("--reuid={uid}"),
                format!("--regid={uid}"),
                "--clear-groups".into(),
                "--".into(),
            ])
            .arg(&exe);
            c
        };
        c.args(["--ignored", "--exact", "--nocapture", "--test-threads=1"])
            .arg(&name)
            .current_dir(&files.cwd)
            .env("CANARY_ENV", format!("ENVSECRET-{tag}"))
            .env("CANARY_TAG", &tag)
            .env("CANARY_HIDDEN", &files.hidden);
        let o = c.output().unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && text.contains("1 passed"),
            "as uid {uid}:\n{text}"
        );
        for l in text.lines().filter_map(|l| l.split_once("figure: ")) {
            eprintln!("uid {uid}: {}", l.1);
        }
        texts.push(text);
    }
    texts
}

#[test]
fn a_learners_drill_reads_nothing_of_the_learner() {
    as_learner("learner_phase_reads_nothing");
}

#[test]
#[ignore = "run by a_learners_drill_reads_nothing_of_the_learner"]
fn learner_phase_reads_nothing() {
    let tag = std::env::var("CANARY_TAG").unwrap();
    let hidden = PathBuf::from(std::env::var("CANARY_HIDDEN").unwrap());
    let cwd = std::env::current_dir().unwrap();
    assert!(cwd.starts_with(&hidden), "{}", cwd.display());
    let dir = tempfile::tempdir().unwrap();
    // A file of the learner's the script must not write (0600), and one it
    // must not read, each open in `studyloop drill` without close-on-exec.
    let scratch = tempfile::tempdir_in(visible_scratch()).unwrap();
    let victim = scratch.path().join("victim");
    std::fs::write(&victim, "original\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let w = std::fs::OpenOptions::new()
        .append(true)
        .open(&victim)
        .unwrap();
    let r = std::fs::File::open(hidden.join(".ssh/id")).unwrap();
    // Without close-on-exec, as a descriptor the shell hands `studyloop
    // drill` is.
    for f in [&w, &r] {
        rustix::io::fcntl_setfd(f, rustix::io::FdFlags::empty()).unwrap();
    }
    let (wfd, rfd) = (w.as_raw_fd(), r.as_raw_fd());
    let control = format!("CONTROL-{tag}");
    let plan_dir = dir.path();
    let snapshot_file = plan_dir.join("snapshot/control");
    std::fs::create_dir_all(plan_dir.join("snapshot")).unwrap();
    std::fs::write(&snapshot_file, &control).unwrap();
    std::fs::set_permissions(&snapshot_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let script = format!(
        "#!/bin/sh\n\
         hex() {{ od -An -v -tx1 | tr -d ' \\n'; }}\n\
         echo \"environ=$(hex </proc/1/environ 2>/dev/null)\"\n\
         echo \"init-cwd=$(readlink /proc/1/cwd 2>/dev/null)\"\n\
         echo \"via-init-cwd=$(cat /proc/1/cwd/notes 2>/dev/null | hex)\"\n\
         echo \"via-init-cwd-up=$(cat /proc/1/cwd/../.ssh/id 2>/dev/null | hex)\"\n\
         echo \"cwd-abs=$(cat {cwd}/notes 2>/dev/null | hex)\"\n\
         echo \"dot-abs=$(cat {hidden}/.ssh/id 2>/dev/null | hex)\"\n\
         echo \"fd-read=$(cat <&{rfd} 2>/dev/null | hex)\"\n\
         echo \"fds=$(ls /proc/self/fd | tr '\\n' ' ')\"\n\
         (echo pwned >&{wfd}) 2>/dev/null && echo WROTE-FD\n\
         (echo pwned >>/proc/self/fd/{wfd}) 2>/dev/null && echo WROTE-PROC-FD\n\
         echo \"control=$(hex <{control_file})\"\n\
         exit 0\n",
        cwd = cwd.display(),
        hidden = hidden.display(),
        control_file = snapshot_file.display(),
    );
    let plan = plan_for(plan_dir, "check", &script, 20);
    let a = runner::attempt(plan_dir, &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    let out = &o.output;
    assert_eq!(o.code, Some(0), "{out}");
    // The channel works: what the phase may read comes back hex-encoded.
    assert!(out.contains(&format!("control={}", hex(&control))), "{out}");
    let secrets = [
        std::env::var("CANARY_ENV").unwrap(),
        format!("NOTES-{tag}"),
        format!("SSHKEY-{tag}"),
    ];
    let recovered: Vec<&String> = secrets
        .iter()
        .filter(|s| out.contains(&hex(s)) || out.contains(s.as_str()))
        .collect();
    let wrote = std::fs::read_to_string(&victim).unwrap() != "original\n" || out.contains("WROTE-");
    println!(
        "figure: {}/3 planted secrets recovered, inherited fd written: {wrote}",
        recovered.len()
    );
    assert!(recovered.is_empty(), "recovered {recovered:?}:\n{out}");
    assert!(!wrote, "{out}");
    let fds = out.lines().find_map(|l| l.strip_prefix("fds=")).unwrap();
    assert_eq!(fds.trim(), "0 1 2 3", "{out}");
    // The init works in `/`, if the script may see that at all.
    let init_cwd = out.lines().find_map(|l| l.strip_prefix("init-cwd="));
    assert!(matches!(init_cwd, Some("" | "/")), "{out}");
    drop((w, r));
}

#[test]
fn a_learners_drill_stops_at_the_attempts_disk_bound() {
    as_learner("learner_phase_fills_the_disk");
}

#[test]
#[ignore = "run by a_learners_drill_stops_at_the_attempts_disk_bound"]
fn learner_phase_fills_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    // 4 files of 200 MiB, each under the per-file limit (256 MiB): 800 MiB.
    let script = "#!/bin/sh\n\
         for i in 1 2 3 4; do head -c 209715200 /dev/zero > \"f$i\" || exit 3; echo \"wrote f$i\"; done\n\
         echo ALL-WRITTEN\n";
    let plan = plan_for(dir.path(), "check", script, 60);
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    let dirs: Vec<PathBuf> = ["home", "tmp", "work"]
        .iter()
        .map(|d| a.dir.join(d))
        .collect();
    let held = Watch::start(dirs).measure().bytes;
    println!(
        "figure: attempt holds {} MiB (bound {} MiB), stopped at the bound: {}",
        held >> 20,
        MAX_ATTEMPT_BYTES >> 20,
        o.over_disk.is_some()
    );
    assert!(o.over_disk.is_some(), "{o:?}");
    assert!(!o.output.contains("ALL-WRITTEN"), "{}", o.output);
    assert_eq!(o.code, None, "{o:?}");
    // What one measuring interval lets through, at most 256 MiB past the bound.
    assert!(held < MAX_ATTEMPT_BYTES + (256 << 20), "{held}");
    runner::close(&a).unwrap();
}
