//! The approval requirement of every real-auth harness trial, decided when the
//! catalogue is built (a listed skip under both runners, like the login preflight):
//! `harness:<h>` must be approved through [`crate::approval::decide`] before its
//! probe or any of its trials may call the harness's model. An unapproved harness is
//! never probed (`login_preflight` asks [`harness_approved`] first), so it makes no
//! request at all.

use crate::approval::{self, Capability};
use crate::runner::trial::{Requirement, TrialSpec};
use crate::selection::{AuthMode, HarnessName, Selection};

/// Whether `harness`'s model calls may run under `selection`: always outside
/// real-auth (the stub or local model answers), else only when approved.
pub(crate) fn harness_approved(selection: &Selection, harness: HarnessName) -> bool {
    selection.auth_mode != AuthMode::RealAuth || harness_unmet(selection, harness).is_none()
}

fn harness_unmet(selection: &Selection, harness: HarnessName) -> Option<String> {
    approval::decide(&selection.approvals, &Capability::Harness(harness)).unmet()
}

/// Adds "`harness:<h>` approved" to every gated trial of a harness in a real-auth run.
pub(crate) fn require_approvals(specs: Vec<TrialSpec>, selection: &Selection) -> Vec<TrialSpec> {
    if selection.auth_mode != AuthMode::RealAuth {
        return specs;
    }
    specs
        .into_iter()
        .map(|spec| {
            let harness = spec.harness();
            match harness {
                Some(h) if spec.gated => spec.requires(Requirement::Checked {
                    what: format!("an approval of `harness:{h}` (real-auth bills your login)"),
                    unmet: harness_unmet(selection, h),
                }),
                _ => spec,
            }
        })
        .collect()
}
