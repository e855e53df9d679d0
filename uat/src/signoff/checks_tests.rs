//! The sign-off's bundle checks refuse a bundle replayed from a cassette.

use std::collections::BTreeMap;

use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::selection::AuthMode;
use studyloop_actors::llm::cassette::{CassetteEvidence, CassetteMode};

use studyloop_acceptance::approval::{ApprovalRecord, REASONS, Reason};

use super::billing::billing_reasons;
use super::checks::bundle_reasons;
use crate::bundle::Bundle;

fn bundle(root: &std::path::Path, cassette: Option<CassetteMode>) -> Bundle {
    approved_bundle(root, cassette, None, None)
}

fn approved_bundle(
    root: &std::path::Path,
    cassette: Option<CassetteMode>,
    harness: Option<&str>,
    approvals: Option<Vec<ApprovalRecord>>,
) -> Bundle {
    let run_id = RunId::generate();
    let mut m = Manifest::new(
        &run_id,
        Tier::Uat,
        "journey::study_session",
        Surface::Journey,
    );
    m.auth_mode = Some(AuthMode::RealAuth);
    m.outcome = Outcome::Completed;
    m.harness = harness.map(str::to_owned);
    m.approvals = approvals;
    m.cassette = cassette.map(|mode| CassetteEvidence {
        mode,
        file: "/runs/x/cassette.jsonl".into(),
        sha256: Some("ab".repeat(32)),
    });
    let w = BundleWriter::create(root.join(run_id.as_str()), m).unwrap();
    Bundle::open(&w.finish().unwrap()).unwrap()
}

/// A real-auth bundle that replayed is refused, naming the cassette's sha256; one
/// that recorded (a live run) and one without a cassette are not. Before, a replayed
/// bundle marked real-auth passed these checks.
#[test]
fn a_replayed_bundle_is_refused_as_replayed_from_cassette() {
    let tmp = tempfile::tempdir().unwrap();
    for (mode, refused) in [
        (Some(CassetteMode::Replay), true),
        (Some(CassetteMode::Record), false),
        (None, false),
    ] {
        let b = bundle(tmp.path(), mode);
        let reasons = bundle_reasons(&BTreeMap::from([("journey::study_session", &b)]));
        let hit = reasons
            .iter()
            .find(|r| r.contains("replayed from cassette"));
        assert_eq!(hit.is_some(), refused, "{mode:?}: {reasons:?}");
        if let Some(r) = hit {
            assert!(
                r.contains(&"ab".repeat(32)) && r.contains("real-auth"),
                "{r}"
            );
        }
    }
}

/// Issue 29: a real-auth bundle of a billed harness signs off only when it recorded
/// that harness's approval for every reason; none recorded, another capability, or
/// one reason short are each refused naming the entry that approves it.
#[test]
fn a_real_auth_bundle_without_its_harness_approval_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = |id: &str, reasons: &[Reason]| ApprovalRecord {
        capability: id.into(),
        reasons: reasons.to_vec(),
    };
    for (approvals, refused) in [
        (None, true),
        (Some(vec![]), true),
        (Some(vec![rec("harness:pi", &REASONS)]), true),
        (
            Some(vec![rec("harness:codex", &[Reason::Chargeable])]),
            true,
        ),
        (Some(vec![rec("harness:codex", &REASONS)]), false),
    ] {
        let b = approved_bundle(tmp.path(), None, Some("codex"), approvals.clone());
        let reasons = billing_reasons(
            &BTreeMap::from([("journey::study_session", &b)]),
            &BTreeMap::new(),
        );
        let hit = reasons.iter().find(|r| r.contains("which bills"));
        assert_eq!(hit.is_some(), refused, "{approvals:?}: {reasons:?}");
        if let Some(r) = hit {
            assert!(
                r.contains("harness:codex[chargeable,credentialed,writes-real-home]")
                    && r.contains("STUDYLOOP_ACC_APPROVE=harness:codex"),
                "{r}"
            );
            assert!(r.contains("billed `harness:codex` (its harness)"), "{r}");
        }
    }
}
