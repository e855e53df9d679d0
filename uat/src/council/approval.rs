//! Which council seats bill, and the one policy's answer for each (issue 29). A seat
//! with a real endpoint (`direct`: a vendor API; `gateway`: your LiteLLM proxy) is
//! the capability `judge:<council>/<seat>` and is asked only when
//! [`studyloop_acceptance::approval::decide`] approves it: otherwise it is recorded as
//! absent with the named skip reason and never contacted. Exempt, as for the learner
//! (`approval::learner_capability`): stub seats (the local stub provider bills
//! nothing), and gateway seats when the run's auth mode is local-model (the gateway
//! then serves a model on this machine). A direct seat is never exempt.

use studyloop_acceptance::approval::{self, Approvals, Capability};

use crate::council::roster::{Backend, Council};

/// The approvals a grading runs under, and whether its gateway is the local model.
#[derive(Debug, Clone, Copy)]
pub struct SeatApprovals<'a> {
    /// The operator's standing approvals (`STUDYLOOP_ACC_APPROVE`).
    pub approvals: &'a Approvals,
    /// True in auth mode local-model only: the gateway serves a local model, so its
    /// seats bill nothing. `studyloop-uat grade` (no mode) leaves it false.
    pub local_gateway: bool,
}

/// The capability a seat bills as, or `None` when it bills nothing.
#[must_use]
pub fn seat_capability(
    council: &str,
    seat: &str,
    backend: Backend,
    local_gateway: bool,
) -> Option<Capability> {
    let bills = match backend {
        Backend::Direct => true,
        Backend::Gateway => !local_gateway,
        Backend::Stub => false,
    };
    bills.then(|| Capability::Judge {
        council: council.to_owned(),
        seat: seat.to_owned(),
    })
}

impl SeatApprovals<'_> {
    /// The named skip reason when the seat bills and is not approved.
    #[must_use]
    pub fn unmet(&self, council: &str, seat: &str, backend: Backend) -> Option<String> {
        let capability = seat_capability(council, seat, backend, self.local_gateway)?;
        approval::decide(self.approvals, &capability).unmet()
    }

    /// The named skip reason of every seat of `council` (named `name`) that bills and
    /// is not approved, in seat order.
    #[must_use]
    pub fn unapproved(&self, name: &str, council: &Council) -> Vec<String> {
        council
            .seats
            .iter()
            .filter_map(|s| self.unmet(name, &s.id, s.backend))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_seat_with_a_real_endpoint_bills() {
        let cap = |b, local| seat_capability("c", "s", b, local).map(|c| c.to_string());
        assert_eq!(cap(Backend::Direct, false).as_deref(), Some("judge:c/s"));
        assert_eq!(cap(Backend::Direct, true).as_deref(), Some("judge:c/s"));
        assert_eq!(cap(Backend::Gateway, false).as_deref(), Some("judge:c/s"));
        assert_eq!(cap(Backend::Gateway, true), None);
        assert_eq!(cap(Backend::Stub, false), None);
    }
}
