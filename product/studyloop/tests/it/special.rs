//! Special files at product paths (issue 25, item 9): a FIFO, or a symlink
//! to `/dev/zero`, planted at the state file, `config.yaml`, the topic and
//! parking feeds, `sessions.db`, `~/.claude.json` or the kiro template hangs
//! no command and is never read without end: `doctor`, `doctor --fix`,
//! `study --end` and the start that reads the harness config each finish
//! within the bound, whatever they then report.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::World;

/// The most a command may take here (a hang used to be > 10 s, a
/// `/dev/zero` read ran until memory was gone).
const BOUND: Duration = Duration::from_secs(8);

/// Plant `kind` at `path`: a FIFO, or a symlink to `/dev/zero`.
fn plant(path: &Path, kind: &str) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match kind {
        "fifo" => studyloop_regular_file::make_fifo_for_tests(path),
        _ => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
    }
}

/// Run `args` under `timeout`; it must finish within [`BOUND`].
#[track_caller]
fn bounded(w: &World, what: &str, args: &[&str]) -> std::process::Output {
    let secs = BOUND.as_secs().to_string();
    let mut argv = vec!["-s", "KILL", secs.as_str(), common::exe()];
    argv.extend(args);
    let t = Instant::now();
    let out = w.program("timeout", &argv).output().unwrap();
    assert!(
        t.elapsed() < BOUND && out.status.code().is_some(),
        "{what}: `{}` hung ({:?}, {:?})",
        args.join(" "),
        t.elapsed(),
        out.status
    );
    out
}

fn config_file(w: &World) -> PathBuf {
    w.config_dir().join("config.yaml")
}

#[test]
fn special_files_at_state_and_config_paths_hang_no_command() {
    for kind in ["fifo", "zero"] {
        for name in ["state", "config", "db"] {
            let w = World::new();
            let path = match name {
                "config" => config_file(&w),
                "db" => w.config_dir().join("sessions.db"),
                _ => w.state_path(),
            };
            plant(&path, kind);
            let what = format!("{kind} at {name}");
            bounded(&w, &what, &["doctor"]);
            bounded(&w, &what, &["doctor", "--fix"]);
            bounded(&w, &what, &["study", "--end"]);
            bounded(&w, &what, &["status"]);
        }
    }
}

#[test]
fn special_files_at_the_feeds_hang_no_end_and_lose_the_other_feed() {
    for kind in ["fifo", "zero"] {
        for feed in ["session-topics.md", "session-parking.md"] {
            let w = World::new();
            w.run(&["study", "Feeds", "--agent", "pi"]).ok();
            w.run(&["topic", "kept", "-s", "win"]).ok();
            w.run(&["park", "asked"]).ok();
            plant(&w.config_dir().join(feed), kind);
            let what = format!("{kind} at {feed}");
            bounded(&w, &what, &["doctor"]);
            bounded(&w, &what, &["topic", "more", "-s", "win"]);
            bounded(&w, &what, &["park", "more"]);
            let out = bounded(&w, &what, &["study", "--end"]);
            assert!(w.sessions().is_empty(), "{what}: {out:?}");
        }
    }
}

#[test]
fn special_files_at_harness_configs_hang_no_start() {
    for kind in ["fifo", "zero"] {
        let w = World::new();
        plant(&w.home.path().join(".claude.json"), kind);
        let what = format!("{kind} at ~/.claude.json");
        bounded(&w, &what, &["study", "Claude", "--agent", "claude"]);
        bounded(&w, &what, &["study", "--end"]);
        let template = w.home.path().join("kiro-template.json");
        plant(&template, kind);
        let w = w.with_env("STUDYLOOP_KIRO_AGENT_TEMPLATE", template.to_str().unwrap());
        let what = format!("{kind} at the kiro template");
        let out = bounded(&w, &what, &["study", "Kiro", "--agent", "kiro"]);
        assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
        assert!(w.sessions().is_empty(), "{what}");
        bounded(&w, &what, &["doctor"]);
    }
}
