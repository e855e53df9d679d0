//! Per-adapter launches without the test hatch: a fake harness binary on PATH
//! records its exact argv and cwd, so these tests see what a real harness
//! would get: binary resolution, fresh and resume argv, where the persona is
//! placed, and which trust files are written (all under a scratch HOME).

use crate::common;

use std::path::{Path, PathBuf};

use common::{World, read_when_ready, wait_until};

/// Records argv (NUL-separated) and cwd, then behaves like an idle TUI.
const RECORDER: &str = "printf '%s\\0' \"$0\" \"$@\" > argv.bin; pwd > cwd.txt; exec cat";

struct Run {
    w: World,
    bin: PathBuf,
}

fn world(binary: &str) -> Run {
    let mut w = World::new();
    w.remove_env("STUDYLOOP_TEST_AGENT_CMD");
    let bin = w.fake_bin(binary, RECORDER);
    // A Claude config that already exists (the trust write only edits one) and a Grok home.
    std::fs::write(
        w.home.path().join(".claude.json"),
        "{\"hasCompletedOnboarding\":true}",
    )
    .unwrap();
    std::fs::create_dir_all(w.home.path().join(".grok")).unwrap();
    Run { w, bin }
}

fn argv(dir: &Path) -> Vec<String> {
    let raw = read_when_ready(&dir.join("argv.bin"), 10);
    raw.trim_end_matches('\0')
        .split('\0')
        .map(str::to_owned)
        .collect()
}

/// What the persona-bearing argument looks like after `"$(cat file)"`.
fn persona_arg(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("studyloop-persona.md"))
        .unwrap()
        .trim_end_matches('\n')
        .to_owned()
}

/// Start, check the fresh argv, end, resume, check the resume argv, end.
fn drive(r: &Run, agent: &str, fresh: &[&str], resume: &[&str], check: impl Fn(&World, &Path)) {
    let w = &r.w;
    w.run(&["study", &format!("Adapter {agent}"), "--agent", agent])
        .ok();
    let dir = PathBuf::from(w.field("session_dir"));
    let expect = |tail: &[&str]| -> Vec<String> {
        std::iter::once(r.bin.display().to_string())
            .chain(tail.iter().map(|a| {
                if *a == "<persona>" {
                    persona_arg(&dir)
                } else {
                    (*a).to_owned()
                }
            }))
            .collect()
    };
    assert_eq!(argv(&dir), expect(fresh), "{agent} fresh argv");
    assert_eq!(
        read_when_ready(&dir.join("cwd.txt"), 5).trim(),
        dir.display().to_string(),
        "cwd is the session dir"
    );
    assert_eq!(w.field("agent"), agent);
    check(w, &dir);
    w.run(&["study", "--end"]).ok();

    std::fs::remove_file(dir.join("argv.bin")).unwrap();
    w.run(&["study", "--resume"]).ok();
    assert_eq!(PathBuf::from(w.field("session_dir")), dir);
    assert_eq!(argv(&dir), expect(resume), "{agent} resume argv");
    w.run(&["study", "--end"]).ok();
    wait_until(5, "sessions gone", || w.sessions().is_empty());
}

fn persona_marker_in(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        text.contains("<!-- PERSONA=studyloop-study -->"),
        "{}: {text}",
        path.display()
    );
}

fn claude_json(w: &World) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(w.home.path().join(".claude.json")).unwrap())
        .unwrap()
}

/// No trust file was touched (every harness but the one that owns it).
fn no_foreign_trust_writes(w: &World) {
    assert_eq!(
        claude_json(w),
        serde_json::json!({"hasCompletedOnboarding": true}),
        "Claude config touched"
    );
    assert!(
        !w.home.path().join(".grok/trusted_folders.toml").exists(),
        "Grok trust written without opt-in"
    );
}

#[test]
fn codex() {
    let r = world("codex");
    drive(&r, "codex", &[], &["resume", "--last"], |w, dir| {
        persona_marker_in(&dir.join("AGENTS.md"));
        no_foreign_trust_writes(w);
    });
}

#[test]
fn claude() {
    let r = world("claude");
    drive(
        &r,
        "claude",
        &["--append-system-prompt", "<persona>"],
        &["--continue", "--append-system-prompt", "<persona>"],
        |w, dir| {
            let v = claude_json(w);
            assert_eq!(v["hasCompletedOnboarding"], true, "other keys kept");
            for d in [dir, dir.parent().unwrap()] {
                assert_eq!(
                    v["projects"][d.display().to_string()]["hasTrustDialogAccepted"],
                    true,
                    "{v}"
                );
            }
            assert!(!dir.join("AGENTS.md").exists());
        },
    );
}

#[test]
fn kiro() {
    let r = world("kiro-cli");
    let agents = r.w.home.path().join(".kiro/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("study-mentor.json"),
        "{\"users\":\"own agent\"}",
    )
    .unwrap();
    drive(
        &r,
        "kiro",
        &["chat", "--agent", "study-mentor"],
        &["chat", "--agent", "study-mentor", "--resume"],
        |w, dir| {
            let agent: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(agents.join("study-mentor.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(
                agent["prompt"],
                format!("file://{}", dir.join("studyloop-persona.md").display())
            );
            assert_eq!(agent["name"], "study-mentor");
            assert_eq!(
                std::fs::read_to_string(agents.join("study-mentor.json.studyloop-backup")).unwrap(),
                "{\"users\":\"own agent\"}"
            );
            no_foreign_trust_writes(w);
        },
    );
    assert_eq!(
        std::fs::read_to_string(agents.join("study-mentor.json")).unwrap(),
        "{\"users\":\"own agent\"}",
        "restored at end"
    );
    assert!(!agents.join("study-mentor.json.studyloop-backup").exists());
}

#[test]
fn pi() {
    let r = world("pi");
    drive(
        &r,
        "pi",
        &["--no-extensions"],
        &["--no-extensions", "--continue"],
        |w, dir| {
            persona_marker_in(&dir.join("AGENTS.md"));
            no_foreign_trust_writes(w);
        },
    );
}

#[test]
fn opencode() {
    let r = world("opencode");
    drive(
        &r,
        "opencode",
        &["--agent", "study-mentor"],
        &["--agent", "study-mentor", "--continue"],
        |w, dir| {
            let agent = dir.join(".opencode/agents/study-mentor.md");
            persona_marker_in(&agent);
            assert!(
                std::fs::read_to_string(&agent)
                    .unwrap()
                    .starts_with("---\ndescription: StudyLoop study mentor\nmode: primary\n")
            );
            no_foreign_trust_writes(w);
        },
    );
}

#[test]
fn grok_with_trust_opt_in() {
    let mut r = world("grok");
    r.w.set_env("STUDYLOOP_GROK_TRUST_SESSION_DIR", "1");
    drive(&r, "grok", &[], &[], |w, dir| {
        persona_marker_in(&dir.join(".grok/GROK.md"));
        let toml =
            std::fs::read_to_string(w.home.path().join(".grok/trusted_folders.toml")).unwrap();
        for d in [dir, dir.parent().unwrap()] {
            assert!(
                toml.contains(&format!("[folders.\"{}\"]\ntrusted = true\n", d.display())),
                "{toml}"
            );
        }
        assert_eq!(
            claude_json(w),
            serde_json::json!({"hasCompletedOnboarding": true})
        );
    });
}

#[test]
fn grok_without_opt_in_writes_no_trust() {
    let r = world("grok");
    r.w.run(&["study", "No trust", "--agent", "grok"]).ok();
    let dir = PathBuf::from(r.w.field("session_dir"));
    assert_eq!(argv(&dir), vec![r.bin.display().to_string()]);
    no_foreign_trust_writes(&r.w);
    r.w.run(&["study", "--end"]).ok();
}
