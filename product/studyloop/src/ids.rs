//! Identifiers and slugs: random uuid v4 study ids, hex, the tmux session slug
//! and the config-topic slug.

use std::fmt::Write as _;

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // getrandom only fails when the OS has no entropy source at all, which no
    // supported platform lacks; an id must never be predictable, so abort.
    getrandom::fill(&mut b).expect("the OS random source is unavailable");
    b
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `n` random bytes as lowercase hex (2n chars).
pub fn random_hex(n: usize) -> String {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).expect("the OS random source is unavailable");
    hex(&b)
}

/// A random RFC 4122 version-4 uuid, lowercase, hyphenated.
pub fn uuid_v4() -> String {
    let mut b: [u8; 16] = random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Lowercase; every run of characters outside `[a-z0-9]` becomes one `-`.
fn dashify(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut dash = false;
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            dash = false;
        } else if !dash {
            out.push('-');
            dash = true;
        }
    }
    out
}

/// The slug of a configured topic (reference: runs of non-`[a-z0-9]` → `-`).
pub fn config_slug(name: &str) -> String {
    dashify(name).trim_matches('-').to_owned()
}

/// The tmux-name slug: dashified, trimmed, cut to 20 chars, `session` if empty.
pub fn session_slug(topic: &str) -> String {
    let s = dashify(topic);
    let s = s.trim_matches('-');
    let cut: String = s.chars().take(20).collect();
    let cut = cut.trim_end_matches('-');
    if cut.is_empty() {
        "session".to_owned()
    } else {
        cut.to_owned()
    }
}

/// `study-<slug>-<first 8 of id>`.
pub fn session_name(topic: &str, study_id: &str) -> String {
    let id8: String = study_id.chars().filter(|c| *c != '-').take(8).collect();
    format!("study-{}-{id8}", session_slug(topic))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_v4_shaped() {
        let u = uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(u, uuid_v4());
    }

    #[test]
    fn slugs() {
        assert_eq!(session_slug("SQL window functions"), "sql-window-functions");
        assert_eq!(
            session_slug("Harness Matrix Live: codex"),
            "harness-matrix-live"
        );
        assert_eq!(session_slug("!!!"), "session");
        assert_eq!(session_slug("  Ünïcode   "), "n-code");
        assert_eq!(
            session_name("SQL", "0123abcd-ef00-4000-8000-000000000000"),
            "study-sql-0123abcd"
        );
        assert_eq!(config_slug("C++ Templates"), "c-templates");
    }
}
