//! Spec capture through the real binary (issue 30 item 5): the persona names
//! the session's spec dir, and `study --end` succeeds and folds what the agent
//! left there into the session row, whatever it left: a symlink to
//! `/etc/passwd`, a FIFO, a huge file, 11 files, non-UTF-8 bytes.

use crate::common;

use common::{World, read_when_ready};

/// Start a session, let `plant` fill its spec dir, end it; returns the row's
/// `spec_captures` JSON.
fn end_with(w: &World, topic: &str, plant: impl FnOnce(&std::path::Path)) -> serde_json::Value {
    w.run(&["study", topic, "--agent", "codex"]).ok();
    let id = w.field("study_session_id");
    let dir = std::path::PathBuf::from(w.field("session_dir"));
    let spec = dir.join("spec");
    assert_eq!(
        std::fs::read_to_string(spec.join(".gitignore")).unwrap(),
        "*\n"
    );
    let persona = read_when_ready(&dir.join("persona-seen.md"), 10);
    assert!(
        persona.contains(&format!("- Spec directory: `{}`", spec.display())),
        "the persona names the spec dir: {persona}"
    );
    plant(&spec);
    let out = w.run(&["study", "--end"]);
    assert_eq!(out.code, 0, "--end failed: {}{}", out.stdout, out.stderr);
    assert_eq!(w.field("mode"), "ended");
    let json: Option<String> = w
        .db()
        .query_row(
            "SELECT spec_captures FROM study_sessions WHERE id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str(&json.expect("spec captures recorded")).unwrap()
}

fn skipped_reason(c: &serde_json::Value, name: &str) -> String {
    c["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} not recorded as skipped: {c}"))["reason"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn end_folds_the_spec_dir_and_never_fails_on_what_the_agent_wrote() {
    let w = World::new();

    let c = end_with(&w, "Plain spec", |d| {
        std::fs::write(d.join("plan.md"), "# Plan\nlearn joins").unwrap();
    });
    assert_eq!(c["entries"][0]["name"], "plan.md");
    assert_eq!(c["entries"][0]["content"], "# Plan\nlearn joins");
    assert_eq!(c["entries"][0]["encoding"], "utf8");

    let c = end_with(&w, "Symlink spec", |d| {
        std::os::unix::fs::symlink("/etc/passwd", d.join("passwd.md")).unwrap();
    });
    assert!(skipped_reason(&c, "passwd.md").starts_with("a symlink"));
    assert!(
        !c.to_string().contains("root:"),
        "/etc/passwd was read: {c}"
    );

    let started = std::time::Instant::now();
    let c = end_with(&w, "Fifo spec", |d| {
        studyloop_regular_file::make_fifo_for_tests(&d.join("pipe.md"));
    });
    assert!(skipped_reason(&c, "pipe.md").starts_with("a FIFO"));
    assert!(
        started.elapsed().as_secs() < 60,
        "the FIFO must not hang --end"
    );

    let c = end_with(&w, "Huge spec", |d| {
        std::fs::write(d.join("huge.md"), "x".repeat(5 << 20)).unwrap();
    });
    let e = &c["entries"][0];
    assert_eq!(
        (e["truncated"].as_bool(), e["size"].as_u64()),
        (Some(true), Some(5 << 20))
    );
    assert_eq!(e["content"].as_str().unwrap().len(), 64 * 1024);

    let c = end_with(&w, "Many specs", |d| {
        for i in 0..11 {
            std::fs::write(d.join(format!("s{i:02}.md")), "x").unwrap();
        }
    });
    assert_eq!(c["entries"].as_array().unwrap().len(), 10, "{c}");
    assert_eq!(c["skipped"].as_array().unwrap().len(), 1);

    let c = end_with(&w, "Binary spec", |d| {
        std::fs::write(d.join("img.png"), [0x89, b'P', b'N', b'G', 0xff]).unwrap();
    });
    assert_eq!(c["entries"][0]["encoding"], "base64");
    assert_eq!(c["entries"][0]["content"], "iVBOR/8=");
}
