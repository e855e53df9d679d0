//! Crafted inputs, part 4 (issue 33 §2): a manifest edited after its results line was
//! written, its inventory still consistent (the inventory does not cover the manifest),
//! so every other check agrees with the edit and only the manifest's sha256 recorded in
//! the results line can catch it; and a results line that records no digest at all.

use serde_json::{Value, json};
use studyloop_acceptance::ledger::TrialOutcome;
use studyloop_acceptance::selection::AuthMode;

use super::Craft;
use crate::common::world::{SMOKE, STUDY, UNGRADED};
use crate::common::{TRANSCRIPT, bundle_in_mode};

/// (name, what the reason must mention, how to craft it).
pub(crate) fn cases() -> Vec<(&'static str, &'static str, Craft)> {
    vec![
        (
            "smoke manifest outcome edited completed -> budget-exhausted",
            "manifest_sha256",
            |w| {
                w.edit_manifest(&w.smoke, |m| m["outcome"] = json!("budget-exhausted"));
                vec![]
            },
        ),
        (
            "stub-provider bundle's manifest auth_mode edited to real-auth",
            "manifest_sha256",
            |w| {
                // An honest stub-provider run of a required cell, its line recorded, then
                // its manifest rewritten to claim a real-auth run (approval included).
                let stub = bundle_in_mode(
                    &w.path("durable"),
                    UNGRADED[0],
                    TRANSCRIPT,
                    Some(AuthMode::StubProvider),
                );
                let mut lines = vec![
                    (SMOKE, TrialOutcome::Passed, Some(w.smoke.as_path())),
                    (STUDY, TrialOutcome::Passed, Some(w.study.as_path())),
                    (UNGRADED[0], TrialOutcome::Passed, Some(stub.as_path())),
                ];
                for (cell, b) in UNGRADED.iter().zip(&w.ungraded).skip(1) {
                    lines.push((cell, TrialOutcome::Passed, Some(b.as_path())));
                }
                w.results(&lines);
                let honest = manifest(&w.ungraded[0]);
                w.edit_manifest(&stub, |m| {
                    m["auth_mode"] = json!("real-auth");
                    m["approvals"] = honest["approvals"].clone();
                });
                vec![]
            },
        ),
        (
            "two bundles' manifest cells swapped, their lines' bundles swapped",
            "manifest_sha256",
            |w| {
                let (a, b) = (&w.ungraded[0], &w.ungraded[1]);
                w.edit_manifest(a, |m| m["cell"] = json!(UNGRADED[1]));
                w.edit_manifest(b, |m| m["cell"] = json!(UNGRADED[0]));
                let (a_s, b_s) = (a.display().to_string(), b.display().to_string());
                w.edit_results(UNGRADED[0], |v| v["bundle"] = json!(b_s));
                w.edit_results(UNGRADED[1], |v| v["bundle"] = json!(a_s));
                vec![]
            },
        ),
        (
            "results line without manifest_sha256",
            "manifest_sha256",
            |w| {
                w.edit_results(SMOKE, |v| {
                    v.as_object_mut().unwrap().remove("manifest_sha256");
                });
                vec![]
            },
        ),
        (
            "results line manifest_sha256 null",
            "manifest_sha256",
            |w| {
                w.edit_results(STUDY, |v| v["manifest_sha256"] = Value::Null);
                vec![]
            },
        ),
    ]
}

fn manifest(bundle: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap()
}
