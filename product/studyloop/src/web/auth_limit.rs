//! The Basic-auth failure limiter of `studyloop web --lan`: per client IP,
//! [`FREE_FAILURES`] wrong passwords, then a [`LOCKOUT`] during which every
//! request from that IP gets `429` with `Retry-After` (the right password too,
//! so a lockout is not a free oracle). A success clears the count.
//!
//! Bounded: at most [`MAX_CLIENTS`] addresses are tracked; when full, expired
//! entries are swept and, failing that, the oldest entry is forgotten.
//!
//! Per-IP counts alone let a guesser spread over many addresses (200
//! addresses × 5 free guesses drew no `429`), and forgetting the oldest entry
//! hands a full table a fresh count. So the failures of all clients also
//! share one budget: past [`GLOBAL_FREE_FAILURES`] wrong passwords within
//! [`WINDOW`], every client that has not given the right password in that
//! window is locked out for [`LOCKOUT`] (a client that has keeps working, so
//! a guesser cannot lock the learner out of a console they are using).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong passwords allowed before a lockout.
pub const FREE_FAILURES: u32 = 5;
/// How long a lockout lasts.
pub const LOCKOUT: Duration = Duration::from_secs(60);
/// Failures older than this no longer count.
const WINDOW: Duration = Duration::from_secs(600);
/// Client addresses tracked at once.
const MAX_CLIENTS: usize = 1024;
/// Wrong passwords from all clients together allowed within [`WINDOW`].
pub const GLOBAL_FREE_FAILURES: u32 = 50;

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    last: Instant,
    until: Option<Instant>,
    /// When this client last gave the right password.
    good: Option<Instant>,
}

/// The failures of all clients within one window.
#[derive(Debug, Default)]
struct Global {
    failures: u32,
    since: Option<Instant>,
    until: Option<Instant>,
}

#[derive(Debug, Default)]
struct Counts {
    clients: HashMap<IpAddr, Entry>,
    global: Global,
}

/// The per-IP and global failure counts.
#[derive(Debug, Default)]
pub struct Limiter {
    entries: Mutex<Counts>,
}

/// Requests that carry no peer address share one bucket (fail closed).
const UNKNOWN: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

impl Limiter {
    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The time left when `client` is locked out (its own lockout, or the
    /// global one for a client not recently known good).
    pub fn locked(&self, client: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        let counts = self.counts();
        let entry = counts.clients.get(&client.unwrap_or(UNKNOWN));
        let known_good = entry
            .and_then(|e| e.good)
            .is_some_and(|g| now.duration_since(g) < WINDOW);
        let global = counts.global.until.filter(|_| !known_good);
        entry
            .and_then(|e| e.until)
            .into_iter()
            .chain(global)
            .filter_map(|until| until.checked_duration_since(now))
            .filter(|left| !left.is_zero())
            .max()
    }

    /// Records a wrong password; the lockout length when this one starts
    /// one (the client's own, or the global one).
    pub fn failed(&self, client: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        let mut counts = self.counts();
        let global = &mut counts.global;
        if global.since.is_none_or(|s| now.duration_since(s) >= WINDOW) {
            *global = Global {
                failures: 0,
                since: Some(now),
                until: global.until.filter(|u| *u > now),
            };
        }
        global.failures += 1;
        let global_lockout = global.failures > GLOBAL_FREE_FAILURES;
        if global_lockout {
            global.until = Some(now + LOCKOUT);
        }
        let map = &mut counts.clients;
        if map.len() >= MAX_CLIENTS {
            map.retain(|_, e| now.duration_since(e.last) < WINDOW);
            if map.len() >= MAX_CLIENTS
                && let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, e)| (e.good.is_some(), e.last))
                    .map(|(ip, _)| *ip)
            {
                map.remove(&oldest);
            }
        }
        let entry = map.entry(client.unwrap_or(UNKNOWN)).or_insert(Entry {
            failures: 0,
            last: now,
            until: None,
            good: None,
        });
        if now.duration_since(entry.last) >= WINDOW || entry.until.is_some_and(|u| u <= now) {
            *entry = Entry {
                failures: 0,
                last: now,
                until: None,
                good: entry.good,
            };
        }
        entry.failures += 1;
        entry.last = now;
        if entry.failures > FREE_FAILURES {
            entry.until = Some(now + LOCKOUT);
        }
        (entry.failures > FREE_FAILURES || global_lockout).then_some(LOCKOUT)
    }

    /// A right password: the client's count starts over and it is known
    /// good (exempt from the global lockout) for [`WINDOW`].
    pub fn succeeded(&self, client: Option<IpAddr>) {
        let now = Instant::now();
        self.counts().clients.insert(
            client.unwrap_or(UNKNOWN),
            Entry {
                failures: 0,
                last: now,
                until: None,
                good: Some(now),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_after_the_free_failures_per_client_and_success_resets() {
        let l = Limiter::default();
        let a = Some(IpAddr::V4(Ipv4Addr::new(192, 168, 1, 2)));
        let b = Some(IpAddr::V4(Ipv4Addr::new(192, 168, 1, 3)));
        for _ in 0..FREE_FAILURES {
            assert_eq!(l.failed(a), None);
        }
        assert_eq!(l.failed(a), Some(LOCKOUT));
        assert!(l.locked(a).is_some());
        assert!(l.locked(b).is_none(), "another client is not locked out");
        l.succeeded(b);
        for _ in 0..3 {
            assert_eq!(l.failed(b), None);
        }
        l.succeeded(b);
        assert_eq!(l.failed(b), None, "a success started the count over");
    }

    #[test]
    fn the_table_stays_bounded() {
        let l = Limiter::default();
        for i in 0..(MAX_CLIENTS as u32 + 100) {
            l.failed(Some(IpAddr::V4(Ipv4Addr::from(i))));
        }
        assert!(l.counts().clients.len() <= MAX_CLIENTS);
    }

    /// 1,000 wrong guesses from 200 addresses (5 each, never over the
    /// per-IP budget) lock out every address not known good, and the
    /// learner's own address (a right password earlier) keeps working.
    #[test]
    fn guesses_spread_over_many_addresses_meet_the_global_budget() {
        let l = Limiter::default();
        let learner = Some(IpAddr::V4(Ipv4Addr::new(192, 168, 1, 9)));
        l.succeeded(learner);
        let mut refused = 0;
        let mut first_refused = None;
        for i in 0..1_000u32 {
            let ip = Some(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i % 200)));
            if l.locked(ip).is_some() {
                refused += 1;
                first_refused.get_or_insert(i);
                continue;
            }
            l.failed(ip);
        }
        eprintln!(
            "figure: {refused} of 1000 spread guesses refused (429), first at {first_refused:?}"
        );
        assert_eq!(first_refused, Some(GLOBAL_FREE_FAILURES + 1));
        assert!(
            l.locked(Some(IpAddr::V4(Ipv4Addr::new(10, 9, 9, 9))))
                .is_some()
        );
        assert!(
            l.locked(learner).is_none(),
            "the known-good learner was locked out"
        );
    }
}
