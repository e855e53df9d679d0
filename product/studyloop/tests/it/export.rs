//! `studyloop export` through the real binary (issue 30 item 3): a session
//! started, given a spec, ended and exported validates against the published
//! schema (docs/schemas/session-export.schema.json) and parses back to the
//! fields the record holds; `--out` is private, refuses to overwrite without
//! `--force`, and an unknown id names how to list sessions.

use crate::common;

use common::{World, mode_of};

fn schema() -> (boon::Schemas, boon::SchemaIndex) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schemas/session-export.schema.json"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut c = boon::Compiler::new();
    c.set_default_draft(boon::Draft::V2020_12);
    c.add_resource("urn:test:session-export", s).unwrap();
    let mut schemas = boon::Schemas::new();
    let idx = c.compile("urn:test:session-export", &mut schemas).unwrap();
    (schemas, idx)
}

#[test]
fn a_session_round_trips_through_export_and_the_schema() {
    let w = World::new();
    w.run(&["study", "Export me", "--agent", "codex", "--energy", "6"])
        .ok();
    let id = w.field("study_session_id");
    let hash = w.field("persona_hash");
    let dir = std::path::PathBuf::from(w.field("session_dir"));
    std::fs::write(dir.join("spec/brief.md"), "Drill: write a LEFT JOIN").unwrap();
    w.run(&["topic", "LEFT JOIN", "-s", "win", "-n", "keeps rows"])
        .ok();
    w.run(&["park", "What about FULL JOIN?"]).ok();
    w.run(&["study", "--end"]).ok();

    let out = w.config_dir().join("export.json");
    let o = w.run(&["export", &id, "--out", out.to_str().unwrap()]).ok();
    assert!(o.stdout.contains("Exported session"), "{}", o.stdout);
    assert_eq!(mode_of(&out), 0o600);
    let text = std::fs::read_to_string(&out).unwrap();
    let a: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (schemas, idx) = schema();
    if let Err(e) = schemas.validate(&a, idx) {
        panic!("the export breaks its schema: {e:#}\n{a:#}");
    }
    let c = &a["content"];
    assert_eq!(a["format"], "studyloop.session-export");
    assert_eq!(c["session"]["id"], id.as_str());
    assert_eq!(c["session"]["topic"], "export me");
    assert_eq!(c["session"]["outcome"], "ended");
    assert_eq!(c["session"]["energy"], 6);
    assert_eq!(c["session"]["win_count"], 1);
    assert_eq!(c["persona_hash"], hash.as_str());
    assert_eq!(c["parked"], serde_json::json!(["What about FULL JOIN?"]));
    assert_eq!(c["topics"].as_array().unwrap().len(), 1);
    assert!(c["topics"][0].as_str().unwrap().contains("LEFT JOIN"));
    assert_eq!(c["progress"][0]["concept"], "LEFT JOIN");
    assert!(c["turns"].is_null(), "no turn recorded: null, not []");
    assert_eq!(c["spec_captures"]["entries"][0]["name"], "brief.md");
    assert_eq!(
        c["spec_captures"]["entries"][0]["content"],
        "Drill: write a LEFT JOIN"
    );
    assert_eq!(
        a["checksum"]["value"].as_str().unwrap(),
        studyloop::export::content_sha256(c),
        "the checksum covers the content as parsed back"
    );
    // Stdout gives the same artefact (but for the export time).
    let s: serde_json::Value = serde_json::from_str(&w.run(&["export", &id]).ok().stdout).unwrap();
    assert_eq!(s["content"], a["content"]);

    // An existing --out is refused without --force, kept as it was, and
    // replaced with it.
    std::fs::write(&out, "mine").unwrap();
    let r = w.run(&["export", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("already exists; pass --force"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    w.run(&["export", &id, "--out", out.to_str().unwrap(), "--force"])
        .ok();
    assert!(std::fs::read_to_string(&out).unwrap().contains(&id));
    assert_eq!(mode_of(&out), 0o600);

    // An unknown id names the way to list them; the list shows this one.
    let r = w.run(&["export", "no-such-id"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("`no-such-id`") && r.stderr.contains("studyloop export --list"),
        "{}",
        r.stderr
    );
    assert!(w.run(&["export", "--list"]).ok().stdout.contains(&id));
}

/// A session whose conversation turns were recorded (the web console's ACP
/// stream writes them through `Store::record_turn`) exports them in the order
/// written, each naming its turn id and role, and still validates.
#[test]
fn recorded_turns_are_exported_in_order_and_validate() {
    let w = World::new();
    w.run(&["study", "Turns", "--agent", "codex"]).ok();
    let id = w.field("study_session_id");
    w.run(&["study", "--end"]).ok();
    {
        let mut s = studyloop::store::Store::open(&w.config_dir().join("sessions.db")).unwrap();
        for (turn_id, role, text) in [
            ("t1", "user", "how does RANK treat ties?"),
            (
                "t1",
                "agent",
                "RANK gives ties one number and skips the next",
            ),
            ("t2", "user", "and DENSE_RANK?"),
        ] {
            s.record_turn(&studyloop::store::NewTurn {
                session_id: &id,
                project_path: "/s",
                turn_id,
                role,
                text,
                created_at: "2026-12-03T12:00:00Z",
            })
            .unwrap();
        }
    }
    let a: serde_json::Value = serde_json::from_str(&w.run(&["export", &id]).ok().stdout).unwrap();
    let (schemas, idx) = schema();
    if let Err(e) = schemas.validate(&a, idx) {
        panic!("the export breaks its schema: {e:#}\n{a:#}");
    }
    let turns: Vec<(String, String, String)> = a["content"]["turns"]
        .as_array()
        .expect("recorded turns are a list")
        .iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
            (s("turn_id"), s("role"), s("text"))
        })
        .collect();
    let want = [
        ("t1", "user", "how does RANK treat ties?"),
        (
            "t1",
            "agent",
            "RANK gives ties one number and skips the next",
        ),
        ("t2", "user", "and DENSE_RANK?"),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(turns, want);
}
