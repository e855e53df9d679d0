//! Issue 17: no receipt without a commit id, and each receipt records which
//! attempt (`STUDYLOOP_ACC_REPEAT`) its bundle was. Before, a lane bundle with
//! `repo_sha: null` became a receipt that no streak could place.

use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{ResultMeta, RunLog, TrialOutcome};
use studyloop_redaction::{RedactionRules, Redactor};
use studyloop_uat::receipts::{collect_all, load_all};

fn lane(root: &std::path::Path, sha: Option<&str>) -> std::path::PathBuf {
    let id = RunId::generate();
    let mut m = Manifest::new(&id, Tier::Acceptance, "cli-tmux::pi", Surface::CliTmux);
    m.harness = Some("pi".into());
    m.outcome = Outcome::Completed;
    m.repo_sha = sha.map(str::to_owned);
    m.dirty = Some(false);
    BundleWriter::create(root.join(id.as_str()), m)
        .unwrap()
        .finish()
        .unwrap()
}

#[test]
fn issue17_a_bundle_without_a_commit_gets_no_receipt_and_receipts_record_the_attempt() {
    let tmp = tempfile::tempdir().unwrap();
    let run = RunLog::open(tmp.path().join("run")).unwrap();
    let evidence = run.dir().join("evidence");
    let with = lane(&evidence, Some("0123456789abcdef0123456789abcdef01234567"));
    let without = lane(&evidence, None);
    let meta = ResultMeta {
        attempt: Some(2),
        ..ResultMeta::default()
    };
    let pass = TrialOutcome::Passed;
    run.record_result_meta("cli-tmux::pi", pass, None, Some(&with), None, meta)
        .unwrap();
    let out = tmp.path().join("receipts");
    let redactor = Redactor::new(&RedactionRules::load_default().unwrap());
    let collected = collect_all(&[evidence], &out, &redactor).unwrap();
    assert_eq!(collected.added, 1);
    assert_eq!(collected.refused.len(), 1, "{:?}", collected.refused);
    assert_eq!(collected.refused[0].0, without);
    assert!(
        collected.refused[0].1.contains("records no commit"),
        "{:?}",
        collected.refused
    );
    let all = load_all(&out).unwrap();
    assert_eq!(all.len(), 1);
    assert!(all[0].repo_sha.is_some());
    assert_eq!(all[0].attempt, Some(2));
    // Issue 33 §2: the receipt and the results line both record the manifest's
    // sha256 as written, so a later edit of the manifest is caught by either.
    let bytes = std::fs::read(with.join("manifest.json")).unwrap();
    let digest = studyloop_acceptance::evidence::manifest_sha256(&bytes);
    assert_eq!(all[0].manifest_sha256.as_deref(), Some(digest.as_str()));
    let log = std::fs::read_to_string(run.dir().join("results.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(line["manifest_sha256"], serde_json::json!(digest), "{line}");
}

/// A lane bundle replayed from a cassette gets no receipt (refused, naming the
/// cassette's sha256); the same lane recorded live does. Before, a replay became a
/// receipt indistinguishable from a live run.
#[test]
fn a_replayed_lane_bundle_gets_no_receipt() {
    use studyloop_actors::llm::cassette::{CassetteEvidence, CassetteMode};
    let tmp = tempfile::tempdir().unwrap();
    let evidence = tmp.path().join("evidence");
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let mut bundles = Vec::new();
    for mode in [CassetteMode::Record, CassetteMode::Replay] {
        let id = RunId::generate();
        let mut m = Manifest::new(&id, Tier::Acceptance, "web-acp::codex", Surface::WebAcp);
        m.harness = Some("codex".into());
        m.outcome = Outcome::Completed;
        m.repo_sha = Some(sha.into());
        m.dirty = Some(false);
        m.cassette = Some(CassetteEvidence {
            mode,
            file: "/runs/r/cassette.jsonl".into(),
            sha256: Some("cd".repeat(32)),
        });
        let w = BundleWriter::create(evidence.join(id.as_str()), m).unwrap();
        bundles.push(w.finish().unwrap());
    }
    let out = tmp.path().join("receipts");
    let redactor = Redactor::new(&RedactionRules::load_default().unwrap());
    let collected = collect_all(&[evidence], &out, &redactor).unwrap();
    assert_eq!(collected.added, 1, "the live (recording) run");
    assert_eq!(collected.refused.len(), 1, "{:?}", collected.refused);
    let (bundle, why) = &collected.refused[0];
    assert_eq!(bundle, &bundles[1]);
    assert!(
        why.contains("replayed from cassette") && why.contains(&"cd".repeat(32)),
        "{why}"
    );
}
