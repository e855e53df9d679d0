//! UTC wall-clock stamps in the two shapes this crate writes.

use jiff::Timestamp;

/// Now as RFC 3339 UTC with millisecond precision, e.g.
/// `2026-11-30T03:51:00.123Z`.
pub fn now_rfc3339() -> String {
    Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Now as the compact stamp a run id starts with, e.g. `20261130T035100Z`.
pub(crate) fn now_compact() -> String {
    Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shapes() {
        let full = super::now_rfc3339();
        assert_eq!(full.len(), 24, "{full}");
        assert!(full.ends_with('Z') && full.as_bytes()[10] == b'T', "{full}");
        let compact = super::now_compact();
        assert_eq!(compact.len(), 16, "{compact}");
    }
}
