//! The product's one clock. Every timestamp the product writes (DB rows, the
//! state file, the feeds' `HH:MM`, the persona's "last session" line) reads
//! [`now`]. By default that is the system clock; `STUDYLOOP_NOW` (an RFC 3339
//! instant) moves the clock so it starts at that instant when the process
//! starts and then runs at real speed, which is how a journey resumes a
//! session "the next day" without waiting a day.
//!
//! The variable is parsed once per process ([`install`], called by `main` of
//! `studyloop` and `studyloop-mcp` from their environment snapshot); a
//! malformed value is an error naming it, never a silent fallback.

use std::sync::OnceLock;

use crate::env::{self, Env, EnvError};

/// The shift from the system clock, in seconds, fixed by [`install`].
static SHIFT: OnceLock<i64> = OnceLock::new();

/// Reads `STUDYLOOP_NOW` from `env` and fixes the process's clock shift
/// (the first call wins; later calls are ignored). Unset or empty: no shift.
///
/// # Errors
/// [`EnvError::Invalid`] when the value is not an RFC 3339 instant.
pub fn install(env: &Env) -> Result<(), EnvError> {
    let shift = shift_for(env, jiff::Timestamp::now())?;
    let _ = SHIFT.set(shift);
    Ok(())
}

/// The shift `env` asks for, relative to the system time `system_now`.
fn shift_for(env: &Env, system_now: jiff::Timestamp) -> Result<i64, EnvError> {
    let Some(raw) = env.get_nonempty(env::STUDYLOOP_NOW)? else {
        return Ok(0);
    };
    let start: jiff::Timestamp = raw.parse().map_err(|_| EnvError::Invalid {
        name: env::STUDYLOOP_NOW,
        value: raw.chars().take(60).collect(),
        accepted: "an RFC 3339 instant such as 2026-12-01T09:00:00Z",
    })?;
    Ok(start.as_second() - system_now.as_second())
}

/// Now: the system time moved by the installed shift.
#[must_use]
pub fn now() -> jiff::Timestamp {
    let real = jiff::Timestamp::now();
    match SHIFT.get().copied().unwrap_or(0) {
        0 => real,
        s => real
            .checked_add(jiff::SignedDuration::from_secs(s))
            .unwrap_or(real),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &str) -> Env {
        Env::from_pairs([(env::STUDYLOOP_NOW, v)])
    }

    #[test]
    fn unset_or_empty_is_the_system_clock() {
        let t = jiff::Timestamp::now();
        assert_eq!(shift_for(&Env::default(), t).unwrap(), 0);
        assert_eq!(shift_for(&env("  "), t).unwrap(), 0);
    }

    #[test]
    fn an_instant_shifts_the_clock_to_start_there() {
        let system: jiff::Timestamp = "2026-11-30T23:00:00Z".parse().unwrap();
        let s = shift_for(&env("2026-12-01T23:00:00Z"), system).unwrap();
        assert_eq!(s, 86_400);
        let s = shift_for(&env("2026-12-01T00:00:00+01:00"), system).unwrap();
        assert_eq!(s, 0);
    }

    #[test]
    fn a_malformed_value_names_the_variable_the_value_and_the_form() {
        for bad in ["tomorrow", "2026-12-01", "+1d", "2026-13-01T00:00:00Z"] {
            let e = shift_for(&env(bad), jiff::Timestamp::now())
                .unwrap_err()
                .to_string();
            assert!(e.contains("STUDYLOOP_NOW"), "{e}");
            assert!(e.contains(bad), "{e}");
            assert!(e.contains("RFC 3339"), "{e}");
        }
    }
}
