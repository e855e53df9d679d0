//! What a graded journey must have approved before it may run (issue 29), all asked
//! of the one policy (`studyloop_acceptance::approval::decide`):
//!
//! - its harness, `harness:<h>`: the graded cell requires the chosen harness
//!   ([`Requirement::HarnessSelected`]), so the runner's real-auth approval gate and
//!   login preflight treat it exactly as an acceptance lane (an unapproved harness is
//!   a listed skip and is never probed);
//! - its learner, `learner:<provider>/<model>` (`catalogue::actor_unmet`);
//! - every seat of the council that grades it that bills, `judge:<council>/<seat>`
//!   ([`judges_requirement`]): one unapproved seat makes the whole journey a listed
//!   skip naming each missing judge capability, before the harness is billed for a
//!   conversation no council could grade. The grader asks again per seat
//!   (`council::Grader`), so no path reaches an unapproved seat.

use studyloop_acceptance::runner::Requirement;
use studyloop_acceptance::selection::{AuthMode, Selection};
use studyloop_actors::llm::cassette::CassetteMode;

use super::grading;
use crate::council::SeatApprovals;
use crate::signoff::Pins;

/// What the requirement checks, as listed.
const WHAT: &str = "an approval of every judge seat that grades it (judge:<council>/<seat>)";

/// The approvals a journey's grading runs under.
pub(super) fn seat_approvals(selection: &Selection) -> SeatApprovals<'_> {
    SeatApprovals {
        approvals: &selection.approvals,
        local_gateway: selection.auth_mode == AuthMode::LocalModel,
    }
}

/// "Every billed seat of the grading council approved": unmet, naming each
/// unapproved judge capability with its reasons and entry, when any is not. A replay
/// asks no seat live, so it needs none; unloadable pins are left for the journey to
/// fail on by name.
pub(super) fn judges_requirement(selection: &Selection) -> Requirement {
    Requirement::Checked {
        what: WHAT.into(),
        unmet: judges_unmet(selection),
    }
}

fn judges_unmet(selection: &Selection) -> Option<String> {
    let replay = selection
        .cassette
        .as_ref()
        .is_some_and(|c| c.mode == CassetteMode::Replay);
    if replay {
        return None;
    }
    let pins = Pins::load_default().ok()?;
    let name = grading::council_for(selection.auth_mode, &pins)?;
    let council = pins.roster.council(name).ok()?;
    let missing = seat_approvals(selection).unapproved(name, council);
    (!missing.is_empty()).then(|| {
        format!(
            "the graded journey is graded by council `{name}`, and {} of its {} seat(s) bill without an approval (nothing was launched): {}",
            missing.len(),
            council.seats.len(),
            missing.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use studyloop_acceptance::caller_env::CallerEnv;

    fn selection(pairs: &[(&str, &str)]) -> Selection {
        Selection::from_env(&CallerEnv::from_pairs(pairs.iter().copied())).unwrap()
    }

    /// Real-auth with only the harness approved: unmet, naming all three `release`
    /// seats with their reasons and entries; with every seat approved: met. The
    /// hermetic (stub) and local (local-model gateway) councils need nothing.
    #[test]
    fn every_billed_seat_of_the_grading_council_must_be_approved() {
        let only_harness = selection(&[
            ("STUDYLOOP_ACC_REAL_AUTH", "1"),
            ("STUDYLOOP_ACC_APPROVE", "harness:codex"),
        ]);
        let why = judges_unmet(&only_harness).expect("unmet");
        for seat in ["anthropic-sonnet", "openai-gpt4o", "gemini-flash"] {
            assert!(
                why.contains(&format!(
                    "capability `judge:release/{seat}` is not approved"
                )) && why.contains(&format!("add the entry `judge:release/{seat}`")),
                "{why}"
            );
        }
        assert!(why.contains("chargeable (bills a vendor)"), "{why}");
        assert!(why.contains("3 of its 3 seat(s)"), "{why}");
        let two = selection(&[
            ("STUDYLOOP_ACC_REAL_AUTH", "1"),
            (
                "STUDYLOOP_ACC_APPROVE",
                "harness:codex,judge:release/anthropic-sonnet,judge:release/openai-gpt4o",
            ),
        ]);
        let why = judges_unmet(&two).expect("one seat short is unmet");
        assert!(
            why.contains("1 of its 3") && why.contains("judge:release/gemini-flash"),
            "{why}"
        );
        let all = selection(&[
            ("STUDYLOOP_ACC_REAL_AUTH", "1"),
            (
                "STUDYLOOP_ACC_APPROVE",
                "harness:codex,judge:release/anthropic-sonnet,judge:release/openai-gpt4o,judge:release/gemini-flash",
            ),
        ]);
        assert_eq!(judges_unmet(&all), None);
        assert_eq!(judges_unmet(&selection(&[])), None, "hermetic: stub seats");
        let local = selection(&[("STUDYLOOP_ACC_AUTH_MODE", "local-model")]);
        assert_eq!(judges_unmet(&local), None, "local: the gateway is local");
    }
}
