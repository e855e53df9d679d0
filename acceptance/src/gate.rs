//! The gate: whether a tier's live trials may run at all, and the skip reason every
//! gated trial carries while they may not.
//!
//! `STUDYLOOP_ACC` opens the acceptance tier; the UAT tier needs `STUDYLOOP_UAT` on top
//! of it. Each is open only when exactly `1` (no trimming; [`Gates`] reads
//! them, here). A closed gate is never an error and never a pass: every gated trial is built
//! and skipped with the reason here, naming each missing opt-in and the recipe that
//! sets it. The runner (`runner::run_with`) applies the gate before anything else.

use crate::caller_env::CallerEnv;
use crate::evidence::Tier;
use crate::selection::{ACC, UAT};

/// The two gates, which never fail to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gates {
    /// `STUDYLOOP_ACC` is exactly `1`.
    pub acceptance: bool,
    /// `STUDYLOOP_UAT` is exactly `1`.
    pub uat: bool,
}

impl Gates {
    /// Reads both gates: exactly `1`, no trimming.
    pub fn from_env(env: &CallerEnv) -> Self {
        let open = |name| env.var(name).as_deref() == Some("1");
        Self {
            acceptance: open(ACC),
            uat: open(UAT),
        }
    }
}

/// The reason every gated acceptance trial carries while `STUDYLOOP_ACC` is off.
pub const GATE_OFF_REASON: &str = "STUDYLOOP_ACC is not 1: acceptance trials are opt-in (docs/run-the-matrix.md#acceptance-tier; run `just testacc`)";
/// The reason every UAT trial carries while `STUDYLOOP_UAT` is off (and `STUDYLOOP_ACC` on).
pub const UAT_GATE_OFF_REASON: &str = "STUDYLOOP_UAT is not 1: UAT journeys need their own opt-in on top of STUDYLOOP_ACC=1 (docs/sign-off-a-release.md#uat-tier; run `just testuat`)";
/// The reason every UAT trial carries while `STUDYLOOP_ACC` is off (and `STUDYLOOP_UAT` on).
pub const UAT_ACC_OFF_REASON: &str = "STUDYLOOP_ACC is not 1: UAT journeys need it as well as STUDYLOOP_UAT=1 (docs/sign-off-a-release.md#uat-tier; run `just testuat`, which sets both)";
/// The reason every UAT trial carries while both gates are off.
pub const UAT_GATES_OFF_REASON: &str = "STUDYLOOP_ACC and STUDYLOOP_UAT are not 1: UAT journeys need both opt-ins (docs/sign-off-a-release.md#uat-tier; run `just testuat`, which sets both)";

/// The closed gate's reason, naming every missing opt-in of the tier.
pub(crate) fn closed_reason(tier: Tier, gates: Gates) -> Option<&'static str> {
    match (tier, gates.acceptance, gates.uat) {
        (Tier::Acceptance, false, _) => Some(GATE_OFF_REASON),
        (Tier::Uat, false, false) => Some(UAT_GATES_OFF_REASON),
        (Tier::Uat, false, true) => Some(UAT_ACC_OFF_REASON),
        (Tier::Uat, true, false) => Some(UAT_GATE_OFF_REASON),
        (_, true, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> CallerEnv {
        CallerEnv::from_pairs(pairs.iter().copied())
    }

    #[test]
    fn uat_needs_both_gates() {
        let open = Gates {
            acceptance: true,
            uat: true,
        };
        let acc_only = Gates {
            acceptance: true,
            uat: false,
        };
        let uat_only = Gates {
            acceptance: false,
            uat: true,
        };
        assert_eq!(closed_reason(Tier::Uat, open), None);
        assert_eq!(
            closed_reason(Tier::Uat, acc_only),
            Some(UAT_GATE_OFF_REASON)
        );
        let reason = closed_reason(Tier::Uat, uat_only).unwrap();
        assert!(reason.starts_with("STUDYLOOP_ACC"), "{reason}");
        assert_eq!(reason, UAT_ACC_OFF_REASON);
        let closed = Gates {
            acceptance: false,
            uat: false,
        };
        let both = closed_reason(Tier::Uat, closed).unwrap();
        assert_eq!(both, UAT_GATES_OFF_REASON);
        assert!(
            both.starts_with("STUDYLOOP_ACC and STUDYLOOP_UAT are not 1")
                && both.contains("docs/sign-off-a-release.md#uat-tier")
        );
        assert_eq!(closed_reason(Tier::Acceptance, acc_only), None);
        assert_eq!(
            closed_reason(Tier::Acceptance, uat_only),
            Some(GATE_OFF_REASON)
        );
        assert!(
            UAT_GATE_OFF_REASON.contains("STUDYLOOP_UAT")
                && UAT_GATE_OFF_REASON.contains("docs/sign-off-a-release.md#uat-tier")
        );
    }

    #[test]
    fn gate_opens_only_on_exactly_one() {
        for (value, open) in [
            ("1", true),
            (" 1", false),
            ("1 ", false),
            ("true", false),
            ("", false),
        ] {
            let gates = Gates::from_env(&env(&[(ACC, value), (UAT, value)]));
            assert_eq!(gates.acceptance, open, "{value:?}");
            assert_eq!(gates.uat, open, "{value:?}");
        }
        assert!(!Gates::from_env(&env(&[])).acceptance);
    }
}
