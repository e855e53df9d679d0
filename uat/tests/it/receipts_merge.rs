//! Receipts from the run directories of several shards (issue 18): a bundle two
//! shards' downloads both hold is one run, counted once, and merging again adds
//! nothing.

use std::path::{Path, PathBuf};

use studyloop_redaction::{RedactionRules, Redactor};
use studyloop_uat::receipts;

fn lane_bundle(evidence: &Path, run_id: &str, harness: &str) -> PathBuf {
    let dir = evidence.join(run_id);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = serde_json::json!({
        "run_id": run_id,
        "date": "2026-12-01T00:00:00Z",
        "tier": "acceptance",
        "cell": format!("cli-tmux::{harness}"),
        "surface": "cli-tmux",
        "harness": harness,
        "auth_mode": "stub-provider",
        "actor_backend": "scripted",
        "outcome": "completed",
        // A receipt names its commit (issue 17); no commit, no receipt.
        "repo_sha": "0123456789abcdef0123456789abcdef01234567",
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    dir
}

#[test]
fn receipts_merge_across_shards_once_and_a_re_merge_adds_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (
        tmp.path().join("shard-1/evidence"),
        tmp.path().join("shard-2/evidence"),
    );
    lane_bundle(&one, "20261201T000000Z-aaaaaaaa", "codex");
    lane_bundle(&two, "20261201T000001Z-bbbbbbbb", "pi");
    // Shard 2's artifact also holds a copy of shard 1's bundle.
    lane_bundle(&two, "20261201T000000Z-aaaaaaaa", "codex");
    let out = tmp.path().join("receipts");
    let rules = RedactionRules::load_default().unwrap();
    let redactor = Redactor::new(&rules);
    // Shard 1 given twice too (e.g. a glob that matches it twice).
    let dirs = vec![one.clone(), two.clone(), one.clone()];
    assert_eq!(receipts::collect(&dirs, &out, &redactor).unwrap(), 2);
    let all = receipts::load_all(&out).unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    let md = receipts::coverage_markdown(&all);
    assert_eq!(
        receipts::collect(&dirs, &out, &redactor).unwrap(),
        0,
        "re-merge adds nothing"
    );
    assert_eq!(
        receipts::coverage_markdown(&receipts::load_all(&out).unwrap()),
        md
    );
}
