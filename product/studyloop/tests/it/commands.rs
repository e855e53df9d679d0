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
    (
        out.code,
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout)),
    )
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
