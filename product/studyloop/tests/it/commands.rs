//! The smaller commands against the real binary: concurrent `topic` writers,
//! `config init|show`, and `doctor` (read-only; exit 0/1/2).

use crate::common;

use common::{World, mode_of};

/// An active session in the state file, without tmux (the feeds only need the state).
fn fake_active(w: &World) {
    std::fs::create_dir_all(w.config_dir()).unwrap();
    std::fs::write(w.state_path(), r#"{"study_session_id":"abc","mode":"study","topic":"t","started_at":"2026-01-01T00:00:00Z"}"#).unwrap();
}

#[test]
fn concurrent_topic_writers_lose_no_line() {
    let w = World::new();
    fake_active(&w);
    const WRITERS: usize = 8;
    const EACH: usize = 25;
    let handles: Vec<_> = (0..WRITERS)
        .map(|i| {
            let cmds: Vec<_> = (0..EACH)
                .map(|j| {
                    let mut c = w.cmd(&[
                        "topic",
                        &format!("writer{i}-line{j}"),
                        "-s",
                        "learning",
                        "-n",
                        &"x".repeat(200),
                    ]);
                    c.stdout(std::process::Stdio::null());
                    c
                })
                .collect();
            std::thread::spawn(move || {
                // Each writer runs its lines back to back; the writers overlap.
                for mut c in cmds {
                    assert!(c.status().unwrap().success());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = std::fs::read_to_string(w.config_dir().join("session-topics.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), WRITERS * EACH);
    for i in 0..WRITERS {
        for j in 0..EACH {
            let needle = format!("] writer{i}-line{j} | status:learning | ");
            assert_eq!(
                lines.iter().filter(|l| l.contains(&needle)).count(),
                1,
                "{needle}"
            );
        }
    }
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("- [") && l.ends_with(&"x".repeat(200))),
        "a line was torn"
    );
    assert_eq!(mode_of(&w.config_dir().join("session-topics.md")), 0o600);
}

#[test]
fn config_init_and_show() {
    let w = World::bare();
    let cfg = w.config_dir().join("config.yaml");
    let out = w.run(&["config", "init"]).ok();
    assert_eq!(out.stdout, format!("Wrote {}\n", cfg.display()));
    assert_eq!(mode_of(&cfg), 0o600);
    assert_eq!(mode_of(&w.config_dir()), 0o700);
    let again = w.run(&["config", "init"]);
    assert_eq!(again.code, 1);
    assert!(
        again.stderr.contains("already exists; pass --force"),
        "{}",
        again.stderr
    );
    w.run(&["config", "init", "--force"]).ok();
    let show = w.run(&["config", "show"]).ok().stdout;
    assert!(show.contains(&format!("config file:  {}", cfg.display())));
    assert!(show.contains(&format!(
        "database:     {}",
        w.config_dir().join("sessions.db").display()
    )));
    assert!(show.contains("default_scope: unclassified"));
    // STUDYLOOP_CONFIG moves the file; STUDYLOOP_DB moves the DB.
    let other = w.home.path().join("elsewhere.yaml");
    let w = w
        .with_env("STUDYLOOP_CONFIG", &other.display().to_string())
        .with_env("STUDYLOOP_DB", "/var/tmp/not-created.db");
    let show = w.run(&["config", "show"]).ok().stdout;
    assert!(
        show.contains("(missing; `studyloop config init` writes one)")
            && show.contains("/var/tmp/not-created.db"),
        "{show}"
    );
}

fn doctor(w: &World) -> (i32, serde_json::Value) {
    let out = w.run(&["doctor", "--json"]);
    let report = common::json_result(&out, "doctor");
    (out.code, report)
}

fn check<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

#[test]
fn doctor_healthy_with_one_harness() {
    let w = World::new();
    w.fake_bin("pi", "echo 'pi 0.73.1'");
    w.fake_bin("codex", "echo 'boom' >&2; exit 3");
    let (code, r) = doctor(&w);
    assert_eq!(code, 0, "{r}");
    assert_eq!(check(&r, "tmux")["status"], "ok");
    assert_eq!(check(&r, "scope")["status"], "ok");
    assert_eq!(check(&r, "database")["status"], "ok");
    let pi = r["harnesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "pi")
        .unwrap();
    assert_eq!(pi["version"], "pi 0.73.1");
    let codex = r["harnesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "codex")
        .unwrap();
    assert!(
        codex["binary"].is_string() && codex["version"].is_null(),
        "unknown version is null: {codex}"
    );
    assert_eq!(check(&r, "harness codex")["status"], "warn");
    assert_eq!(check(&r, "harness grok")["status"], "warn");
    // Read-only: nothing created.
    assert!(!w.config_dir().join("sessions.db").exists() && !w.state_path().exists());
    assert!(!w.server_running());
    assert!(w.run(&["doctor"]).ok().stdout.contains("[ok  ] tmux"));
}

#[test]
fn doctor_exit_codes() {
    // No config: the scope check fails (fixable) → 1.
    let w = World::bare();
    w.fake_bin("grok", "echo 1.0.1");
    let (code, r) = doctor(&w);
    assert_eq!(code, 1, "{r}");
    assert_eq!(check(&r, "scope")["status"], "fail");
    assert_eq!(check(&r, "config")["status"], "warn");
    // Unknown top-level keys are reported, not fatal.
    std::fs::create_dir_all(w.config_dir()).unwrap();
    std::fs::write(
        w.config_dir().join("config.yaml"),
        "memory: {default_scope: work}\nfrobnicate: 1\n",
    )
    .unwrap();
    let (code, r) = doctor(&w);
    assert_eq!(code, 0, "{r}");
    assert!(
        check(&r, "config")["detail"]
            .as_str()
            .unwrap()
            .contains("frobnicate")
    );
    // Malformed config or a missing tmux is a core failure → 2.
    std::fs::write(w.config_dir().join("config.yaml"), "memory: [\n").unwrap();
    assert_eq!(doctor(&w).0, 2);
    let mut w = World::new();
    w.set_env("PATH", &w.bin.display().to_string());
    let (code, r) = doctor(&w);
    assert_eq!(code, 2);
    assert_eq!(check(&r, "tmux")["status"], "fail");
    assert_eq!(check(&r, "harnesses")["status"], "fail");
}

/// Runs `studyloop module …` in `w`, as uid/gid 65534 when `nobody` is set
/// (through `setpriv`, the way CI's root reaches what a user meets).
fn module_cmd(w: &World, nobody: bool, args: &[&str]) -> common::Out {
    let mut full = vec!["module"];
    full.extend_from_slice(args);
    let mut c = if nobody {
        let mut c = w.program(
            "setpriv",
            &[
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                common::exe(),
            ],
        );
        c.args(&full);
        c
    } else {
        w.cmd(&full)
    };
    let o = c.stdin(std::process::Stdio::null()).output().unwrap();
    common::Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The seed's walk: new → check → add → list → remove, from the real binary,
/// as the running user and (when root) as an unprivileged one.
#[test]
fn module_new_check_add_list_remove_walk() {
    let root = rustix::process::geteuid().is_root();
    for nobody in if root { vec![false, true] } else { vec![false] } {
        let w = World::bare();
        if nobody {
            std::fs::set_permissions(
                w.config_dir().parent().unwrap().parent().unwrap(),
                std::os::unix::fs::PermissionsExt::from_mode(0o777),
            )
            .unwrap();
        }
        let run = |args: &[&str]| module_cmd(&w, nobody, args);
        let new = run(&["new", "my-drills"]);
        assert_eq!(new.code, 0, "{new:?}");
        let check = run(&["check", "my-drills"]);
        assert_eq!(
            (check.code, check.stdout.as_str()),
            (
                0,
                "my-drills conforms to module contract v1 (MC001-MC017).\n"
            )
        );
        let add = run(&["add", "my-drills"]);
        assert_eq!(add.code, 0, "{add:?}");
        assert!(
            add.stdout.starts_with("Installed my-drills 0.1.0 (digest "),
            "{add:?}"
        );
        let list = run(&["list"]);
        assert_eq!(list.code, 0, "{list:?}");
        assert!(
            list.stdout.starts_with("my-drills  0.1.0  ") && list.stdout.ends_with("  intact\n"),
            "{list:?}"
        );
        let snaps = w.config_dir().join("modules/snapshots");
        let digest = std::fs::read_dir(&snaps)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert_eq!(
            mode_of(&w.config_dir().join("modules/modules.lock.json")),
            0o600
        );
        if nobody {
            // Sealed for the user who owns it: a write into the snapshot fails.
            let poke = w
                .program(
                    "setpriv",
                    &[
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "sh",
                        "-c",
                        "echo x >> \"$1/module.yaml\"",
                        "sh",
                    ],
                )
                .arg(&digest)
                .status()
                .unwrap();
            assert!(!poke.success(), "a sealed snapshot file was writable");
        }
        // A drill phase from the sealed snapshot, behind a real terminal.
        let prefix = if nobody {
            "setpriv --reuid=65534 --regid=65534 --clear-groups "
        } else {
            ""
        };
        let drill = drill_on_a_tty_as(&w, prefix, "my-drills", "check", "yes\n");
        assert!(
            drill.stdout.contains("check: passed (exit 0)\n"),
            "nobody={nobody}: {drill:?}"
        );
        let remove = run(&["remove", "my-drills"]);
        assert_eq!(
            (remove.code, remove.stdout.as_str()),
            (0, "Removed my-drills 0.1.0 and its snapshot.\n"),
            "{remove:?}"
        );
        assert!(!digest.exists());
        let list = run(&["list"]);
        assert_eq!(
            list.stdout,
            "No modules installed; add one with `studyloop module add PATH`.\n"
        );
    }
}

/// A violating module: exit 1 and exactly the findings, one per line.
#[test]
fn module_check_lists_findings_and_add_refuses() {
    let w = World::bare();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/modules/mc003");
    let fixture = fixture.to_str().unwrap();
    let out = w.run(&["module", "check", fixture]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "MC003 CHANGELOG.md:1: CHANGELOG.md is missing or empty; add the change history\n"
    );
    let add = w.run(&["module", "add", fixture]);
    assert_eq!(add.code, 1);
    assert!(
        add.stdout
            .ends_with("Nothing was installed: the module does not conform.\n"),
        "{add:?}"
    );
    assert!(!w.config_dir().join("modules").exists());
    let missing = w.run(&["module", "check", "nope"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .starts_with("studyloop: error: cannot open module `"),
        "{missing:?}"
    );
}

/// Concurrent `module add` (and then `remove`) processes serialise on the
/// store's lock: no lockfile entry is lost, no snapshot is half-written.
#[test]
fn concurrent_module_adds_and_removes_lose_nothing() {
    const N: usize = 8;
    let w = World::bare();
    for i in 0..N {
        assert_eq!(w.run(&["module", "new", &format!("m{i}")]).code, 0);
    }
    // Two scaffolds differ only in id, so each has its own digest.
    let spawn_all = |verb: &str| {
        let children: Vec<_> = (0..N)
            .map(|i| {
                let mut c = w.cmd(&["module", verb, &format!("m{i}")]);
                c.stdout(std::process::Stdio::null());
                c.spawn().unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success(), "a concurrent {verb} failed");
        }
    };
    spawn_all("add");
    let lock: serde_json::Value = serde_json::from_slice(
        &std::fs::read(w.config_dir().join("modules/modules.lock.json")).unwrap(),
    )
    .unwrap();
    let mut ids: Vec<&str> = lock["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..N).map(|i| format!("m{i}")).collect::<Vec<_>>());
    let snaps = w.config_dir().join("modules/snapshots");
    assert_eq!(std::fs::read_dir(&snaps).unwrap().count(), N);
    spawn_all("remove");
    assert_eq!(std::fs::read_dir(&snaps).unwrap().count(), 0);
    let list = w.run(&["module", "list"]);
    assert!(list.stdout.starts_with("No modules installed"), "{list:?}");
}

/// `studyloop drill` behind a real pseudo-terminal (`script(1)`), typing `answer`.
pub(crate) fn drill_on_a_tty(w: &World, phase: &str, answer: &str) -> common::Out {
    drill_on_a_tty_of(w, "my-drills", phase, answer)
}

fn drill_on_a_tty_of(w: &World, module: &str, phase: &str, answer: &str) -> common::Out {
    drill_on_a_tty_as(w, "", module, phase, answer)
}

/// As [`drill_on_a_tty_of`], the command line led by `prefix` (e.g. setpriv).
pub(crate) fn drill_on_a_tty_as(
    w: &World,
    prefix: &str,
    module: &str,
    phase: &str,
    answer: &str,
) -> common::Out {
    use std::io::Write as _;
    let line = format!(
        "{prefix}{} drill {phase} {module}/getting-started/ready-01",
        common::exe()
    );
    let mut child = w
        .program("script", &["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    common::Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).replace('\r', ""),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The seed's drill walk: no consent from a pipe; a typed `yes` on a
/// terminal runs the check; the result reaches the live tmux session's agent
/// as one `practice_check` block (`Mentor told.`), or the CLI says why not.
#[test]
fn drill_needs_typed_consent_and_tells_the_live_mentor() {
    let w = World::new();
    assert_eq!(w.run(&["module", "new", "my-drills"]).code, 0);
    assert_eq!(w.run(&["module", "add", "my-drills"]).code, 0);
    let attempts = w.config_dir().join("modules/attempts");

    let piped = w.run(&["drill", "check", "my-drills/getting-started/ready-01"]);
    assert_eq!(piped.code, 1, "{piped:?}");
    assert!(
        piped.stderr.contains("stdin is not a terminal"),
        "{piped:?}"
    );
    assert!(!attempts.exists(), "something ran without consent");

    let declined = drill_on_a_tty(&w, "check", "y\n");
    assert_eq!(declined.code, 2, "{declined:?}");
    assert!(
        declined.stdout.contains("Not run: the answer was not yes."),
        "{declined:?}"
    );
    assert!(!attempts.exists(), "something ran without consent");

    let alone = drill_on_a_tty(&w, "check", "yes\n");
    assert_eq!(alone.code, 0, "{alone:?}");
    for want in [
        "argv: [\"",
        "sha256: ",
        "Run this phase now?",
        "| ready\n",
        "check: passed (exit 0)\n",
        "Mentor not told: no_active_session\n",
    ] {
        assert!(
            alone.stdout.contains(want),
            "{want:?} not in {}",
            alone.stdout
        );
    }

    w.run(&["study", "drills", "--agent", "codex"]).ok();
    let pane = w.field("mux_main_pane");
    let told = drill_on_a_tty(&w, "check", "yes\n");
    assert_eq!(told.code, 0, "{told:?}");
    assert!(told.stdout.contains("Mentor told.\n"), "{}", told.stdout);
    common::wait_until(10, "the block in the agent's pane", || {
        let screen = w
            .tmux(&["capture-pane", "-p", "-J", "-S", "-50", "-t", &pane])
            .stdout;
        screen.contains("[practice_check] data from a StudyLoop drill")
            && screen.contains("| ready")
    });
    w.run(&["study", "--end"]).ok();

    let cleanup = drill_on_a_tty(&w, "cleanup", "yes\n");
    // script(1) merges stderr into its stdout.
    assert_eq!(
        cleanup.code, 1,
        "the scaffold has no cleanup phase: {cleanup:?}"
    );
    assert!(cleanup.stdout.contains("studyloop: error: drill `my-drills/getting-started/ready-01` has no cleanup phase; it has: check"), "{cleanup:?}");
}

/// A kubeconfig-context drill is refused after consent and before anything
/// runs (creating the disposable cluster is not wired yet); a snapshot
/// changed after install is refused before anything is shown.
#[test]
fn drill_refuses_a_cluster_target_and_a_tampered_snapshot() {
    let w = World::bare();
    assert_eq!(w.run(&["module", "new", "kube"]).code, 0);
    let manifest = w.home.path().join("kube/module.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("kind: workdir", "kind: kubeconfig-context"),
    )
    .unwrap();
    assert_eq!(w.run(&["module", "add", "kube"]).code, 0);
    let out = drill_on_a_tty_of(&w, "kube", "check", "yes\n");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout.contains("Run this phase now?")
            && out
                .stdout
                .contains("Refused: this drill targets a kubeconfig-context cluster"),
        "{out:?}"
    );
    assert!(
        !w.config_dir().join("modules/attempts").exists(),
        "something ran"
    );

    let snaps = w.config_dir().join("modules/snapshots");
    let snap = std::fs::read_dir(&snaps)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let script = snap.join("scripts/check.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(&script, "#!/bin/sh\necho pwned\n").unwrap();
    let out = drill_on_a_tty_of(&w, "kube", "check", "yes\n");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("was changed after install")
            && !out.stdout.contains("Run this phase now?"),
        "{out:?}"
    );
    let list = w.run(&["module", "list"]);
    assert_eq!(list.code, 1);
    assert!(list.stdout.contains("TAMPERED"), "{list:?}");
}

/// `module new` + `module add` of my-drills, then `studyloop web` on a free
/// loopback port, listening; returns the server process and its port.
pub(crate) fn installed_and_served(w: &World) -> (std::process::Child, u16) {
    assert_eq!(w.run(&["module", "new", "my-drills"]).code, 0);
    assert_eq!(w.run(&["module", "add", "my-drills"]).code, 0);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let web = w
        .cmd(&["web", "--port", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_until(20, "studyloop web listening", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let file = w.config_dir().join(format!("web/{port}.token"));
    common::wait_until(20, "the console token file", || file.is_file());
    let token = std::fs::read_to_string(&file).unwrap();
    CONSOLE_TOKENS
        .lock()
        .unwrap()
        .push((port, token.trim().to_owned()));
    (web, port)
}

/// The token of each console `installed_and_served` started, by port.
static CONSOLE_TOKENS: std::sync::Mutex<Vec<(u16, String)>> = std::sync::Mutex::new(Vec::new());

/// The token header line for the console on `port` (empty for another server, such as
/// chromedriver).
pub(crate) fn token_header(port: u16) -> String {
    CONSOLE_TOKENS
        .lock()
        .unwrap()
        .iter()
        .find(|(p, _)| *p == port)
        .map(|(_, t)| format!("X-StudyLoop-Token: {t}\r\n"))
        .unwrap_or_default()
}

/// The URL the console on `port` printed, opening `fragment`.
pub(crate) fn console_url(port: u16, fragment: &str) -> String {
    let header = token_header(port);
    let token = header.trim().rsplit(' ').next().unwrap_or_default();
    format!("http://127.0.0.1:{port}/?token={token}#{fragment}")
}

/// Labs in real headless Chromium (the SPA's own JavaScript runs against the
/// real `studyloop web`): the entry shows a drill with its id, prompt and
/// Start drill while a module is installed, and is hidden once none is.
#[test]
fn labs_entry_in_chromium_only_while_a_module_is_installed() {
    const CHROMIUM: &str = "/usr/bin/chromium";
    assert!(
        std::path::Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is missing: run `just deps` (it installs Debian's chromium)"
    );
    let w = World::bare();
    let (mut web, port) = installed_and_served(&w);
    let profile = tempfile::tempdir().unwrap();
    let dom = || {
        let out = w
            .program(
                CHROMIUM,
                &[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    &format!("--user-data-dir={}", profile.path().display()),
                    "--virtual-time-budget=5000",
                    "--dump-dom",
                    &console_url(port, "labs"),
                ],
            )
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = dom();
    let nav = |page: &str| {
        page.split("<a ")
            .find(|a| a.contains("id=\"nav-labs\""))
            .map(|a| a.split('>').next().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    let entry = nav(&shown);
    assert!(
        !entry.is_empty() && !entry.contains("hidden"),
        "Labs entry not shown: {entry:?}"
    );
    for want in [
        "data-testid=\"labs-drill\"",
        "<h3>my-drills/getting-started/ready-01</h3>",
        "Run the check phase and read its result.",
        "Start drill",
    ] {
        assert!(shown.contains(want), "{want} not in the Labs view");
    }
    assert_eq!(w.run(&["module", "remove", "my-drills"]).code, 0);
    let gone = dom();
    assert!(
        nav(&gone).contains("hidden"),
        "Labs entry still shown: {:?}",
        nav(&gone)
    );
    assert!(!gone.contains("labs-drill\""), "a drill is still listed");
    let _ = web.kill();
    let _ = web.wait();
}

/// One JSON POST to a local `studyloop web` (plain HTTP/1.1).
pub(crate) fn post_local(port: u16, path: &str, body: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        c,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        token_header(port),
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    let _ = c.read_to_string(&mut reply);
    reply
}

/// A configured world whose web ACP sessions run `studyloop-stub-acp`.
pub(crate) fn acp_stub_world() -> World {
    let stub = std::path::Path::new(common::exe()).with_file_name("studyloop-stub-acp");
    assert!(
        stub.is_file(),
        "{} is missing; run `cargo build --bins`",
        stub.display()
    );
    World::new().with_env("STUDYLOOP_TEST_ACP_CMD", &format!("'{}'", stub.display()))
}

/// A check's result reaches a session running in the web console over ACP:
/// `studyloop drill check` posts the block to the console, which prompts the
/// live agent with it (`web::practice` proves the agent sees it).
#[test]
fn drill_tells_a_web_acp_session() {
    let w = acp_stub_world();
    let (mut web, port) = installed_and_served(&w);
    let started = post_local(
        port,
        "/api/session/start",
        r#"{"topic":"drills","agent":"codex","transport":"acp"}"#,
    );
    assert!(started.starts_with("HTTP/1.1 201"), "{started}");
    let told = drill_on_a_tty(&w, "check", "yes\n");
    assert_eq!(told.code, 0, "{told:?}");
    assert!(told.stdout.contains("Mentor told.\n"), "{}", told.stdout);
    let _ = post_local(port, "/api/session/end", "{}");
    let _ = web.kill();
    let _ = web.wait();
}

#[test]
fn now_without_an_active_plan_equals_the_golden_file() {
    let w = World::new();
    let out = w.run(&["now", "--json"]).ok();
    // The golden file is the `result` (the library's `now` test shares it).
    let golden = include_str!("../golden/now_plan_no_active.json");
    let result = common::json_result(&out, "now");
    assert_eq!(
        serde_json::to_string_pretty(&result).unwrap() + "\n",
        golden
    );
}

#[test]
fn plan_commands_drive_one_document() {
    let w = World::new();
    let plans = w.home.path().join("plans");
    let w = w.with_env("STUDYLOOP_PLANS_DIR", plans.to_str().unwrap());
    let created = w
        .run(&[
            "plan",
            "new",
            "SQL windows",
            "--id",
            "sql-windows",
            "--why",
            "reports",
            "--success",
            "running totals",
            "--milestone",
            "OVER clause",
            "--milestone",
            "Frames",
        ])
        .ok();
    assert!(
        created
            .stdout
            .contains("Created plan sql-windows (draft, revision r"),
        "{}",
        created.stdout
    );
    // A script names the revision it read: a stale one is refused with the current
    // one and changes nothing; the current one applies.
    let shown = common::json_result(
        &w.run(&["plan", "show", "sql-windows", "--json"]).ok(),
        "plan.show",
    );
    let rev = shown["revision"].as_str().unwrap().to_owned();
    let before = std::fs::read_to_string(plans.join("sql-windows.md")).unwrap();
    let stale = w.run(&[
        "plan",
        "status",
        "sql-windows",
        "active",
        "--if-revision",
        "r0000000000000000",
    ]);
    assert_eq!(stale.code, 1, "{}", stale.stderr);
    assert!(
        stale.stderr.contains("stale_revision:") && stale.stderr.contains(&rev),
        "{}",
        stale.stderr
    );
    assert_eq!(
        std::fs::read_to_string(plans.join("sql-windows.md")).unwrap(),
        before
    );
    w.run(&[
        "plan",
        "status",
        "sql-windows",
        "active",
        "--if-revision",
        &rev,
    ])
    .ok();
    w.run(&["plan", "milestone", "sql-windows", "0"]).ok();
    let doc = std::fs::read_to_string(plans.join("sql-windows.md")).unwrap();
    assert!(doc.contains("- [x] **OVER clause**"), "{doc}");
    assert_eq!(mode_of(&plans.join("sql-windows.md")), 0o600);
    let now = common::json_result(&w.run(&["now", "--json"]).ok(), "now");
    assert_eq!(now["primary"]["source"], "study_plan:sql-windows:1");
    assert_eq!(now["active_plans"][0]["plan_id"], "sql-windows");
    let path = w.run(&["plan", "path", "sql-windows"]).ok();
    assert_eq!(
        path.stdout.trim(),
        plans.join("sql-windows.md").display().to_string()
    );
    for (args, prefix) in [
        (vec!["plan", "show", "../etc"], "invalid_id:"),
        (vec!["plan", "show", "nope"], "not_found:"),
        (
            vec!["plan", "milestone", "sql-windows", "9"],
            "invalid_milestone:",
        ),
        (vec!["plan", "delete", "sql-windows"], "invalid:"),
    ] {
        let out = w.run(&args);
        assert_eq!(out.code, 1, "{args:?}");
        assert!(out.stderr.contains(prefix), "{args:?}: {}", out.stderr);
    }
    std::fs::remove_file(w.config_dir().join("sessions.db")).ok();
    let re = w.run(&["plan", "reindex"]).ok();
    assert!(re.stdout.starts_with("Indexed 1 plans"), "{}", re.stdout);
    w.run(&["plan", "delete", "sql-windows", "--yes"]).ok();
    assert!(!plans.join("sql-windows.md").exists());
    // No scope: exit 2 like every DB-touching command.
    let bare = World::bare();
    let out = bare.run(&["plan", "list"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("No context scope configured"));
}

/// CLI processes and an in-process writer (the layer the web and MCP doors
/// call) record onto one plan at once: the document lock and re-read keep
/// every update.
#[test]
fn concurrent_plan_writers_across_processes_lose_no_update() {
    let w = World::new();
    w.run(&["plan", "new", "Shared", "--id", "shared"]).ok();
    let procs: Vec<_> = (0..4)
        .map(|p| {
            let cmds: Vec<_> = (0..8)
                .map(|i| {
                    let mut c = w.cmd(&[
                        "plan",
                        "record",
                        "shared",
                        &format!("cli{p}-{i}"),
                        "--body",
                        "b",
                    ]);
                    c.stdout(std::process::Stdio::null());
                    c
                })
                .collect();
            std::thread::spawn(move || {
                for mut c in cmds {
                    assert!(c.status().unwrap().success());
                }
            })
        })
        .collect();
    let env = w.lib_env();
    let ctx = studyloop::context::Ctx {
        env,
        cwd: w.home.path().into(),
        exe: common::exe().into(),
    };
    let app = studyloop::plans::PlanApp::from_ctx(&ctx).unwrap();
    for i in 0..16 {
        app.record_learning(
            "shared",
            studyloop::plans::IfRevision::Unchecked,
            &format!("lib-{i}"),
            "b",
            "active",
        )
        .unwrap();
    }
    procs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(app.get("shared").unwrap().records.len(), 4 * 8 + 16);
}

#[test]
fn plan_architect_opens_a_plan_architect_session_and_creates_no_plan() {
    let w = World::new();
    let out = w
        .run(&["plan", "architect", "SQL windows", "--agent", "pi"])
        .ok();
    assert!(
        out.stdout.contains("Started a planning session"),
        "{}",
        out.stdout
    );
    let s = w.state().expect("state");
    assert_eq!(
        (s["mode"].clone(), s["topic"].clone()),
        (
            serde_json::json!("plan-architect"),
            serde_json::json!("SQL windows")
        )
    );
    let listed = w.run(&["plan", "list", "--json"]).ok();
    assert_eq!(
        common::json_result(&listed, "plan.list")["count"],
        0,
        "{}",
        listed.stdout
    );
    w.run(&["study", "--end"]).ok();
}

/// `plan new --from-file` reads through the one plan-input reader (shared with
/// `--json @PATH`): a document file relative to the working directory, refused when it
/// is a FIFO (never waited on) or over the document bound, writing nothing.
#[test]
fn plan_new_from_file_reads_a_document_and_refuses_a_fifo_or_an_oversized_file() {
    let w = World::new();
    w.run(&["plan", "new", "Source plan", "--id", "source"])
        .ok();
    let doc = w.run(&["plan", "show", "source", "--markdown"]).ok().stdout;
    std::fs::write(
        w.home.path().join("copy.md"),
        doc.replace("id: source", "id: copied"),
    )
    .unwrap();
    w.run(&["plan", "new", "ignored", "--from-file", "copy.md"])
        .ok();
    let shown = w.run(&["plan", "show", "copied", "--json"]).ok();
    assert!(shown.stdout.contains("\"copied\""), "{}", shown.stdout);
    let big = w.home.path().join("big.md");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1024 * 1024 + 1)
        .unwrap();
    let out = w.run(&["plan", "new", "x", "--from-file", "big.md"]);
    assert!(
        out.code == 1 && out.stderr.contains("larger than 1048576 bytes (1 MiB)"),
        "{out:?}"
    );
    let fifo = w.home.path().join("fifo.md");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let out = w.run(&["plan", "new", "x", "--from-file", "fifo.md"]);
        assert!(out.code == 1 && out.stderr.contains("fifo.md"), "{out:?}");
    } else {
        eprintln!("SKIP the FIFO case: mkfifo is not available here");
    }
    let listed = w.run(&["plan", "list", "--json"]).ok().stdout;
    assert!(listed.contains("\"count\": 2"), "{listed}");
}
