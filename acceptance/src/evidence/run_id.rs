//! Run ids: `YYYYmmddTHHMMSSZ-<8 lowercase hex>`, UTC with a random suffix so two
//! runs in the same second never collide.

use std::fmt;
use std::str::FromStr;

use crate::clock;

/// A validated run id; safe to use as a single path component.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(String);

/// A string that is not a run id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid run id {value:?}: expected YYYYmmddTHHMMSSZ-<8 lowercase hex>, e.g. 20261130T035100Z-1a2b3c4d"
)]
pub struct InvalidRunId {
    /// The rejected string.
    pub value: String,
}

impl RunId {
    /// A fresh id for now.
    pub fn generate() -> Self {
        RunId(format!(
            "{}-{}",
            clock::now_compact(),
            crate::hex::random(4)
        ))
    }

    /// Validates `value` by full-string match.
    pub fn parse(value: &str) -> Result<Self, InvalidRunId> {
        let b = value.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        let ok = b.len() == 25
            && digits(0..8)
            && b[8] == b'T'
            && digits(9..15)
            && b[15] == b'Z'
            && b[16] == b'-'
            && b[17..]
                .iter()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c));
        if ok {
            Ok(RunId(value.to_owned()))
        } else {
            Err(InvalidRunId {
                value: value.to_owned(),
            })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for RunId {
    type Err = InvalidRunId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RunId::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_and_differ() {
        let a = RunId::generate();
        let b = RunId::generate();
        assert_ne!(a, b);
        assert_eq!(RunId::parse(a.as_str()), Ok(a));
    }

    #[test]
    fn rejects_anything_else_by_full_match() {
        for bad in [
            "",
            "../escape",
            "/etc/passwd",
            ".hidden",
            "20261130T035100Z-1a2b3c4d\n",
            "20261130T035100Z-1A2B3C4D",
            "20261130T035100Z-1a2b3c4",
            "20261130T035100Z_1a2b3c4d",
            "2026113XT035100Z-1a2b3c4d",
        ] {
            let err = RunId::parse(bad).unwrap_err();
            assert!(err.to_string().contains("YYYYmmddTHHMMSSZ"), "{err}");
        }
    }
}
