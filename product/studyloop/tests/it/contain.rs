//! One containment for every launch path (issue 25, item 10): a child that
//! leaves the session — `env -i` (no marker), a double fork (reparented),
//! `setsid` (out of the process group) — is gone once the session ends, for
//! the tmux pane (`integrity::children_that_left_the_process_group_are_stopped_at_end`),
//! the web PTY shell and the web ACP agent (here, through the real
//! `studyloop web`), and for `studyloop contain` itself, as root and as
//! uid 65534. Escapees are found by their unique `sleep` argument in
//! `/proc/*/cmdline`: a pid the harness records is one of its namespace's.

use crate::commands::{acp_stub_world, installed_and_served, post_local};
use crate::common::{self, World, wait_until};

/// A `sleep` argument no other test uses (nextest runs each test in a
/// process of its own).
pub(crate) fn unique_sleep(base: u32) -> String {
    format!("{base}{:05}", std::process::id() % 100_000)
}

/// Pids (outside view) of live `sleep ARG` processes.
pub(crate) fn sleeping(arg: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')));
            !zombie
                && args.first().is_some_and(|a| a.ends_with(b"sleep"))
                && args.get(1) == Some(&arg.as_bytes())
        })
        .collect()
}

/// Kills what the check found (so a failing run leaves nothing), then
/// asserts there was nothing.
pub(crate) fn assert_none_left(arg: &str, what: &str) {
    let left = sleeping(arg);
    for p in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    assert!(left.is_empty(), "{what}: `sleep {arg}` survived: {left:?}");
}

/// A shell line that starts `sleep ARG` escaped three ways at once: a
/// cleared environment, a double fork and a session of its own.
pub(crate) fn escapee(arg: &str) -> String {
    format!("(setsid env -i sleep {arg} </dev/null >/dev/null 2>&1 &)")
}

/// `studyloop contain -- sh -c SCRIPT`, through `prefix` (e.g. `setpriv …`).
fn contain(prefix: &[&str], script: &str) -> common::Out {
    let mut argv: Vec<&str> = prefix.to_vec();
    argv.extend([common::exe(), "contain", "--", "/bin/sh", "-c", script]);
    let o = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    common::Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A process of the caller's, outside any containment: it must outlive
/// every `studyloop contain` run (the init's `kill(-1)` reaches only its own
/// namespace; the fallback kills by pid, never `kill(-1)`).
struct Bystander {
    arg: String,
    child: std::process::Child,
}

impl Bystander {
    fn start(base: u32) -> Self {
        let arg = unique_sleep(base);
        let child = std::process::Command::new("sleep")
            .arg(&arg)
            .spawn()
            .unwrap();
        Self { arg, child }
    }

    fn assert_alive(&self, what: &str) {
        assert!(
            !sleeping(&self.arg).is_empty(),
            "{what}: a process outside the containment was killed"
        );
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const NOBODY: [&str; 4] = [
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
];

#[test]
fn contain_kills_what_the_harness_left_when_it_exits() {
    let root = rustix::process::geteuid().is_root();
    let mut runs: Vec<(&str, Vec<&str>)> = vec![("the caller", vec![])];
    if root {
        runs.push(("uid 65534", NOBODY.to_vec()));
    } else {
        eprintln!("skip: the uid 65534 run needs root (setpriv); ran as the caller only");
    }
    let bystander = Bystander::start(68);
    for (who, prefix) in runs {
        let arg = unique_sleep(61);
        let script = format!(
            "{}; sleep 0.3; echo \"pid $$ uid $(id -u)\"; exit 7",
            escapee(&arg)
        );
        let out = contain(&prefix, &script);
        // The harness's code, its identity kept, pid 2 under the init.
        assert_eq!(out.code, 7, "{who}: {out:?}");
        assert!(out.stdout.contains("pid 2 uid"), "{who}: {out:?}");
        let uid = if prefix.is_empty() {
            rustix::process::geteuid().as_raw()
        } else {
            65534
        };
        assert!(
            out.stdout.contains(&format!("uid {uid}\n")),
            "{who}: {out:?}"
        );
        assert_none_left(&arg, who);
        bystander.assert_alive(who);
    }
}

/// Where the kernel refuses a PID namespace (here: a user namespace whose
/// `max_pid_namespaces` is 0), the harness runs under a subreaper, the
/// reason is printed, and what it left is still killed.
#[test]
fn contain_without_namespaces_falls_back_to_a_subreaper() {
    let bystander = Bystander::start(69);
    let arg = unique_sleep(62);
    let inner = format!(
        "echo 0 > /proc/sys/user/max_pid_namespaces || exit 90; exec \"$0\" contain -- /bin/sh -c '{}; sleep 0.3; exit 5'",
        escapee(&arg)
    );
    let o = std::process::Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "/bin/sh",
            "-c",
            &inner,
            common::exe(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(90) || stderr.contains("unshare failed") {
        eprintln!(
            "skip: this kernel gives no user namespace to set max_pid_namespaces in: {stderr}"
        );
        return;
    }
    assert_eq!(o.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("no PID namespace for the harness") && stderr.contains("subreaper"),
        "{stderr}"
    );
    assert_none_left(&arg, "the subreaper fallback");
    bystander.assert_alive("the subreaper fallback");
}

/// The named skip of the uid-65534 re-run for the tests that drive a whole
/// `World` (its state tree, tmux socket and console token belong to the
/// test's user): the same binary and command are run as uid 65534 by
/// `contain_kills_what_the_harness_left_when_it_exits`.
pub(crate) fn skip_nobody(what: &str) {
    eprintln!(
        "skip (uid 65534): {what} runs as the test's user only (its World is not re-created for uid 65534); the uid 65534 run of `studyloop contain` is contain_kills_what_the_harness_left_when_it_exits"
    );
}

/// Starts a web session with `body`, lets its escapee start, ends it.
fn web_session_leaves_nothing(w: &World, body: &str, arg: &str, what: &str) {
    skip_nobody(what);
    let (mut web, port) = installed_and_served(w);
    let started = post_local(port, "/api/session/start", body);
    assert!(started.starts_with("HTTP/1.1 201"), "{what}: {started}");
    wait_until(20, "the escapee running", || !sleeping(arg).is_empty());
    let ended = post_local(port, "/api/session/end", "{}");
    assert!(ended.starts_with("HTTP/1.1 200"), "{what}: {ended}");
    // The stop's grace, then what is left is what survived.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !sleeping(arg).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = web.kill();
    let _ = web.wait();
    assert_none_left(arg, what);
}

#[test]
fn a_web_pty_sessions_escaped_children_are_gone_after_end() {
    let arg = unique_sleep(63);
    let w = World::new().with_env(
        "STUDYLOOP_TEST_AGENT_CMD",
        &format!("{}; exec cat", escapee(&arg)),
    );
    web_session_leaves_nothing(
        &w,
        r#"{"topic":"escapes","agent":"pi","transport":"pty"}"#,
        &arg,
        "web PTY",
    );
}

#[test]
fn a_web_acp_agents_escaped_children_are_gone_after_end() {
    let arg = unique_sleep(64);
    let stub = std::path::Path::new(common::exe()).with_file_name("studyloop-stub-acp");
    let w = acp_stub_world().with_env(
        "STUDYLOOP_TEST_ACP_CMD",
        &format!("/bin/sh -c '{}; exec {}'", escapee(&arg), stub.display()),
    );
    web_session_leaves_nothing(
        &w,
        r#"{"topic":"escapes","agent":"codex","transport":"acp"}"#,
        &arg,
        "web ACP",
    );
}

/// The contained harness keeps the pane's terminal: it stays in the
/// foreground process group (a read from a background group would stop it
/// with SIGTTIN) and what is typed into the pane reaches it.
#[test]
fn a_contained_pane_harness_reads_what_is_typed_into_its_terminal() {
    let w = World::new().with_env(
        "STUDYLOOP_TEST_AGENT_CMD",
        "echo ready; read line; echo \"got:$line in $(cat /proc/self/stat | cut -d' ' -f1 -s)\"; exec cat",
    );
    w.run(&["study", "Typing", "--agent", "pi"]).ok();
    let pane = w.field("mux_main_pane");
    let screen = || {
        w.tmux(&["capture-pane", "-p", "-J", "-S", "-50", "-t", &pane])
            .stdout
    };
    wait_until(10, "the harness waiting for input", || {
        screen().contains("ready")
    });
    w.tmux(&["send-keys", "-t", &pane, "typed-by-the-learner", "Enter"]);
    wait_until(10, "the harness echoing the typed line", || {
        screen().contains("got:typed-by-the-learner in ")
    });
    w.run(&["study", "--end"]).ok();
}

/// A SIGTERM to `studyloop contain` reaches the harness (which may clean up
/// and choose its exit code); a harness that ignores it is killed with
/// everything it started after the grace (3 s).
#[test]
fn a_sigterm_reaches_the_harness_and_an_ignored_one_ends_it_after_the_grace() {
    use std::io::BufRead as _;
    let held = unique_sleep(70);
    for (script, want, what) in [
        (
            "trap 'echo got-term; exit 9' TERM; echo ready; sleep 30 & wait".to_owned(),
            Some(9),
            "a harness that traps SIGTERM",
        ),
        (
            format!("trap '' TERM; {}; echo ready; sleep {held}", escapee(&held)),
            None,
            "a harness that ignores SIGTERM",
        ),
    ] {
        let mut child = std::process::Command::new(common::exe())
            .args(["contain", "--", "/bin/sh", "-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n", "{what}");
        let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        let sent = std::time::Instant::now();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let status = child.wait().unwrap();
        let took = sent.elapsed();
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut rest);
        match want {
            Some(code) => {
                assert_eq!(status.code(), Some(code), "{what}: {rest}");
                assert!(rest.contains("got-term"), "{what}: {rest}");
                assert!(took < std::time::Duration::from_secs(2), "{what}: {took:?}");
            }
            None => {
                // Killed (128 + 9) after the grace, not before.
                assert_eq!(status.code(), Some(137), "{what}");
                assert!(
                    took >= std::time::Duration::from_millis(2500)
                        && took < std::time::Duration::from_secs(8),
                    "{what}: {took:?}"
                );
                assert_none_left(&held, what);
            }
        }
    }
}

/// `studyloop doctor` says how a session's harness would be contained: in a
/// PID namespace here, under a subreaper (a warning with the kernel's
/// reason, not a failure) where the kernel refuses one.
#[test]
fn doctor_reports_the_containment_a_harness_would_get() {
    let w = World::new();
    let report = |out: common::Out| -> serde_json::Value {
        let r = common::json_result(&out, "doctor");
        r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "containment")
            .cloned()
            .unwrap_or_else(|| panic!("no containment check: {r}"))
    };
    let here = report(w.run(&["doctor", "--json"]));
    assert_eq!(here["status"], "ok", "{here}");
    let o = w
        .program(
            "unshare",
            &[
                "--user",
                "--map-root-user",
                "/bin/sh",
                "-c",
                "echo 0 > /proc/sys/user/max_pid_namespaces || exit 90; exec \"$0\" doctor --json",
                common::exe(),
            ],
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    if o.status.code() == Some(90) {
        eprintln!("skip: no user namespace to set max_pid_namespaces in");
        return;
    }
    let refused = report(common::Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    });
    assert_eq!(refused["status"], "warn", "{refused}");
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("subreaper") && detail.contains("unshare: "),
        "{detail}"
    );
}
