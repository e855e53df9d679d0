//! `inputs.json` (issue 30 item 7): a real case run through the engine keeps the
//! selection, definition, budget, turn script and the redacted persona; capture is
//! bounded and never follows a link or blocks on a FIFO.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};
use studyloop_actors::fake::FakeMentor;

use super::*;
use crate::caller_env::CallerEnv;
use crate::case::{Case, RunDirBundle, Transport, converse};
use crate::evidence::{Surface, Tier};
use crate::ledger::RunLog;
use crate::runner::TrialContext;
use crate::scratch::Scratch;
use crate::selection::{HarnessName, Selection};

fn context(run: &Path) -> TrialContext {
    let caller = CallerEnv::from_pairs(Vec::<(&str, String)>::new());
    TrialContext {
        name: "cli-tmux::codex::inputs".into(),
        tier: Tier::Acceptance,
        selection: Selection::from_env(&caller).unwrap(),
        caller,
        run_log: RunLog::open(run).unwrap(),
    }
}

fn sha(bytes: &[u8]) -> String {
    crate::hex::encode(&Sha256::digest(bytes))
}

/// A persona holding what must not reach a bundle verbatim: a home path and a key.
const PERSONA: &str = "You are the study mentor.\nThe learner's notes are in /home/alice/notes.md.\nOPENAI_API_KEY=sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCD\n";

fn run_case(persona: Option<PersonaSeen>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(&dir.path().join("run"));
    let finished = Case::new(&ctx, HarnessName::Codex, Surface::CliTmux).run(
        &RunDirBundle::new(&ctx),
        |case| {
            case.slots.put_scratch(Scratch::create().unwrap());
            case.record.facts.persona = persona;
            converse(case, Transport::Socket(&mut FakeMentor::echo())).map(drop)
        },
    );
    let bundle = finished.bundle.unwrap();
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    let bytes = std::fs::read(bundle.join(INPUTS_FILE)).unwrap();
    // Covered by the inventory like every other evidence file.
    assert_eq!(manifest["file_inventory"][INPUTS_FILE], sha(&bytes));
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn a_case_keeps_every_input_that_shaped_it() {
    let hash = &sha(PERSONA.as_bytes())[..16];
    let inputs = run_case(Some(PersonaSeen {
        product_hash: Some(hash.to_owned()),
        text: Some(PERSONA.to_owned()),
        text_missing: None,
    }));
    assert_eq!(inputs["schema_version"], 1);
    // The turn script itself: name, version, and the shipped text with its sha256.
    let (_, shipped) = crate::turn_scripts::TURN_SCRIPTS[0];
    let script = &inputs["turn_script"];
    assert_eq!(script["name"], "study-v1.json");
    assert_eq!(script["version"], 1);
    assert_eq!(script["text"], shipped);
    assert_eq!(script["sha256"], sha(shipped.as_bytes()));
    assert_eq!(script["truncated"], false);
    // The persona: its hash agrees with the product's, and the kept text is redacted.
    let persona = &inputs["persona"];
    assert_eq!(persona["sha256"], sha(PERSONA.as_bytes()));
    assert_eq!(persona["product_hash"], hash);
    assert_eq!(persona["matches_product_hash"], true);
    let kept = persona["redacted"]["text"].as_str().unwrap();
    assert!(kept.starts_with("You are the study mentor."), "{kept}");
    assert!(
        !kept.contains("/home/alice") && !kept.contains("sk-proj-Abcdef"),
        "the persona reached the bundle unredacted: {kept}"
    );
    assert_eq!(
        persona["redacted"]["sha256"],
        sha(kept.as_bytes()),
        "the redacted text's own hash"
    );
    // Selection (with its digest), definition and budget.
    assert_eq!(inputs["selection"]["actor"], "scripted");
    assert_eq!(inputs["selection"]["auth_mode"], "stub-provider");
    let digest = sha(
        serde_json::to_string(&crate::evidence::sorted(inputs["selection"].clone()))
            .unwrap()
            .as_bytes(),
    );
    assert_eq!(inputs["selection_sha256"], digest);
    assert_eq!(inputs["definition"]["trial"], "cli-tmux::codex::inputs");
    assert_eq!(inputs["definition"]["surface"], "cli-tmux");
    assert_eq!(inputs["definition"]["harness"], "codex");
    assert_eq!(
        inputs["definition"]["runner_sha256"].as_str().map(str::len),
        Some(64)
    );
    assert_eq!(inputs["budget"]["max_turns"], 3);
    assert_eq!(inputs["pinned"], serde_json::json!([]));
    assert_eq!(inputs["problems"], serde_json::json!([]), "{inputs:#}");
}

#[test]
fn a_persona_the_product_did_not_hash_so_is_named_and_an_unseen_one_is_null() {
    let other = run_case(Some(PersonaSeen {
        product_hash: Some("0123456789abcdef".to_owned()),
        text: Some(PERSONA.to_owned()),
        text_missing: None,
    }));
    assert_eq!(other["persona"]["matches_product_hash"], false);
    let unseen = run_case(None);
    assert_eq!(unseen["persona"], Value::Null);
    let unread = run_case(Some(PersonaSeen {
        product_hash: Some("0123456789abcdef".to_owned()),
        text: None,
        text_missing: Some("gone".to_owned()),
    }));
    assert_eq!(unread["persona"]["redacted"], Value::Null);
    assert_eq!(unread["persona"]["matches_product_hash"], Value::Null);
    assert_eq!(
        unread["problems"],
        serde_json::json!(["persona text not captured: gone"])
    );
}

#[test]
fn texts_are_bounded_on_a_character_boundary() {
    let big = format!("{}é{}", "a".repeat(TEXT_CAP - 1), "b".repeat(100));
    let v = text_value(&big);
    assert_eq!(v["bytes"], big.len());
    assert_eq!(v["truncated"], true);
    assert_eq!(v["sha256"], sha(big.as_bytes()));
    // é straddles the cap: cut before it, never inside it.
    assert_eq!(v["text"].as_str().unwrap().len(), TEXT_CAP - 1);
    let small = text_value("abc");
    assert_eq!(small["truncated"], false);
    assert_eq!(small["text"], "abc");
}

#[test]
fn a_persona_file_is_read_only_when_it_is_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("persona.md");
    std::fs::write(&real, PERSONA).unwrap();
    let seen = PersonaSeen::from_file(Some("h"), &real);
    assert_eq!(seen.text.as_deref(), Some(PERSONA));
    // A link (to a file outside the session dir) is not followed.
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let seen = PersonaSeen::from_file(Some("h"), &link);
    assert!(seen.text.is_none(), "{seen:?}");
    assert!(seen.text_missing.unwrap().contains("symlink"));
    // A FIFO is refused at once, never waited on.
    let fifo = dir.path().join("fifo.md");
    studyloop_regular_file::make_fifo_for_tests(&fifo);
    let t = std::time::Instant::now();
    let seen = PersonaSeen::from_file(None, &fifo);
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    assert!(seen.text_missing.unwrap().contains("FIFO"), "FIFO named");
    // Not UTF-8, and missing.
    let bin = dir.path().join("bin.md");
    std::fs::write(&bin, [0xff, 0xfe, 0x00]).unwrap();
    assert!(
        PersonaSeen::from_file(None, &bin)
            .text_missing
            .unwrap()
            .contains("not UTF-8")
    );
    assert!(
        PersonaSeen::from_file(None, &dir.path().join("nope"))
            .text
            .is_none()
    );
}
