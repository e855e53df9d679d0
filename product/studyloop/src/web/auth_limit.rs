//! The Basic-auth failure limiter of `studyloop web --lan`: per client IP,
//! [`FREE_FAILURES`] wrong passwords, then a [`LOCKOUT`] during which every
//! request from that IP gets `429` with `Retry-After` (the right password too,
//! so a lockout is not a free oracle). A success clears the count.
//!
//! Bounded: at most [`MAX_CLIENTS`] addresses are tracked; when full, expired
//! entries are swept and, failing that, the oldest entry is forgotten.

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

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    last: Instant,
    until: Option<Instant>,
}

/// The per-IP failure counts.
#[derive(Debug, Default)]
pub struct Limiter {
    entries: Mutex<HashMap<IpAddr, Entry>>,
}

/// Requests that carry no peer address share one bucket (fail closed).
const UNKNOWN: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

impl Limiter {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The time left when `client` is locked out.
    pub fn locked(&self, client: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        self.map()
            .get(&client.unwrap_or(UNKNOWN))
            .and_then(|e| e.until)
            .and_then(|until| until.checked_duration_since(now))
            .filter(|left| !left.is_zero())
    }

    /// Records a wrong password; the lockout length when this one starts it.
    pub fn failed(&self, client: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        let mut map = self.map();
        if map.len() >= MAX_CLIENTS {
            map.retain(|_, e| now.duration_since(e.last) < WINDOW);
            if map.len() >= MAX_CLIENTS
                && let Some(oldest) = map.iter().min_by_key(|(_, e)| e.last).map(|(ip, _)| *ip)
            {
                map.remove(&oldest);
            }
        }
        let entry = map.entry(client.unwrap_or(UNKNOWN)).or_insert(Entry {
            failures: 0,
            last: now,
            until: None,
        });
        if now.duration_since(entry.last) >= WINDOW || entry.until.is_some_and(|u| u <= now) {
            *entry = Entry {
                failures: 0,
                last: now,
                until: None,
            };
        }
        entry.failures += 1;
        entry.last = now;
        (entry.failures > FREE_FAILURES).then(|| {
            entry.until = Some(now + LOCKOUT);
            LOCKOUT
        })
    }

    /// A right password: the count starts over.
    pub fn succeeded(&self, client: Option<IpAddr>) {
        self.map().remove(&client.unwrap_or(UNKNOWN));
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
        assert!(l.map().len() <= MAX_CLIENTS);
    }
}
