//! The sign-off's approval check (issue 29 item 5): a real-auth bundle signs off only
//! when every capability it actually billed is among the approvals it recorded
//! (`manifest.json` `approvals`), for every reason that capability declares. What
//! billed, from the evidence itself:
//!
//! - its harness (`harness` of a real-auth manifest): `harness:<h>`;
//! - its learner, when a model played it (`actor_model` with a gateway or direct
//!   `actor_backend`): the `learner_capability` the conversation recorded, which must
//!   then be present;
//! - every seat of its arbitration that bills (`council::seat_capability`) and was
//!   asked (it scored, or its request was timed): `judge:<council>/<seat>`.
//!
//! Such a run billed without a person's approval (or predates approvals) and cannot
//! sign off; each reason names the capability and the entry that approves it.

use std::collections::BTreeMap;

use studyloop_acceptance::approval::{ApprovalRecord, Capability};
use studyloop_acceptance::evidence::Manifest;
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_actors::ActorKind;

use crate::bundle::Bundle;
use crate::council::{Arbitration, SeatStatus, seat_capability};

/// What a bundle billed that its recorded approvals do not cover, one reason each.
pub(crate) fn billing_reasons(
    bundles: &BTreeMap<&str, &Bundle>,
    arbitrations: &BTreeMap<&str, &Arbitration>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    for (cell, bundle) in bundles {
        let m = bundle.manifest();
        if m.auth_mode != Some(AuthMode::RealAuth) {
            continue;
        }
        let mut billed: Vec<Result<(Capability, &str), String>> = Vec::new();
        if let Some(h) = m
            .harness
            .as_deref()
            .and_then(|h| h.parse::<HarnessName>().ok())
        {
            billed.push(Ok((Capability::Harness(h), "its harness")));
        }
        billed.extend(learner(m));
        if let Some(a) = arbitrations.get(cell) {
            billed.extend(judges(a).into_iter().map(Ok));
        }
        for b in billed {
            match b {
                Ok((capability, what)) if !approved(m, &capability) => {
                    reasons.push(unapproved(cell, m, &capability, what));
                }
                Ok(_) => {}
                Err(why) => reasons.push(format!(
                    "bundle {} of cell `{cell}` is a real-auth run whose {why}: what its learner billed is unknown, so no approval can be checked; re-run it with this build",
                    m.run_id
                )),
            }
        }
    }
    reasons
}

/// The learner's capability when a model played it, or why it is unknown.
fn learner(m: &Manifest) -> Option<Result<(Capability, &'static str), String>> {
    let backend = m.actor_backend.as_deref()?;
    let model_kind = [ActorKind::Gateway, ActorKind::Direct]
        .iter()
        .any(|k| k.as_str() == backend);
    // A model actor was built (its model recorded) only when the conversation ran.
    let model = m.actor_model.as_deref().filter(|_| model_kind);
    match (&m.learner_capability, model) {
        (Some(id), _) => Some(
            id.parse::<Capability>()
                .map(|c| (c, "its learner"))
                .map_err(|e| format!("learner_capability {id:?} is not a capability id ({e})")),
        ),
        (None, Some(model)) => Some(Err(format!(
            "{backend} learner (model `{model}`) recorded no learner_capability"
        ))),
        (None, None) => None,
    }
}

/// Every seat that bills and was asked.
fn judges(a: &Arbitration) -> Vec<(Capability, &'static str)> {
    a.seats
        .iter()
        .filter(|s| matches!(s.status, SeatStatus::Scored { .. }) || s.elapsed_ms.is_some())
        // A real-auth bundle's gateway is never the local model.
        .filter_map(|s| seat_capability(&a.council, &s.id, s.backend, false))
        .map(|c| (c, "a judge seat that graded it"))
        .collect()
}

/// Whether the bundle recorded `capability` approved for every reason it declares.
fn approved(m: &Manifest, capability: &Capability) -> bool {
    let id = capability.to_string();
    m.approvals.as_ref().is_some_and(|records| {
        records.iter().any(|r| {
            r.capability == id && capability.reasons().iter().all(|x| r.reasons.contains(x))
        })
    })
}

fn unapproved(cell: &str, m: &Manifest, capability: &Capability, what: &str) -> String {
    let recorded = match m.approvals.as_deref() {
        None => "none recorded".to_owned(),
        Some([]) => "none".to_owned(),
        Some(r) => r
            .iter()
            .map(ApprovalRecord::entry)
            .collect::<Vec<_>>()
            .join(", "),
    };
    format!(
        "bundle {} of cell `{cell}` is a real-auth run that billed `{capability}` ({what}), which bills, but its recorded approvals ({recorded}) do not include `{}`: re-run it with the entry added (STUDYLOOP_ACC_APPROVE={capability},...)",
        m.run_id,
        capability.with_reasons()
    )
}
