//! `receipts/COVERAGE.md` is generated, never hand-edited: regenerating it from
//! the committed receipts must give the committed file byte for byte. Also
//! checks every committed receipt parses and passes the pinned redaction rules.

use std::path::PathBuf;

use studyloop_uat::receipts::{self, COVERAGE_FILE};

fn receipts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../receipts")
}

#[test]
fn coverage_md_is_regenerated_from_the_receipts() {
    let dir = receipts_dir();
    let all = receipts::load_all(&dir).expect("every committed receipt parses");
    let committed =
        std::fs::read_to_string(dir.join(COVERAGE_FILE)).expect("receipts/COVERAGE.md exists");
    assert_eq!(
        committed,
        receipts::coverage_markdown(&all),
        "receipts/COVERAGE.md differs from what the receipts give; run `just receipts` and commit the result"
    );
}

#[test]
fn committed_receipts_hold_nothing_the_redaction_rules_would_rewrite() {
    let rules = studyloop_redaction::RedactionRules::load_default().expect("pinned rules");
    let redactor = studyloop_redaction::Redactor::new(&rules);
    for r in receipts::load_all(&receipts_dir()).unwrap() {
        let text = serde_json::to_string(&r).unwrap();
        let findings = redactor.findings(&text);
        // Placeholders the redactor itself wrote are fine; raw hits are not.
        assert!(
            findings.is_empty() || redactor.redact(&text) == text,
            "receipt {} still contains redactable text: {findings:?}",
            r.run_id
        );
    }
}

#[test]
fn committed_receipts_hold_no_local_paths() {
    for r in receipts::load_all(&receipts_dir()).unwrap() {
        let text = serde_json::to_string(&r).unwrap();
        for needle in ["/tmp/", "/work/", "/root", "/home/", "sl-acc-"] {
            assert!(
                !text.contains(needle),
                "receipt {} contains {needle:?}",
                r.run_id
            );
        }
    }
}
