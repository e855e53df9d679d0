//! The plan id: the document's file stem, so it is a strict pattern
//! (`[a-z0-9][a-z0-9-]{0,63}`): no separators, no dots, no `..`, nothing a
//! path could escape with.

use super::PlanError;

/// A validated plan id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct PlanId(String);

/// The longest id.
pub const MAX_ID_LEN: usize = 64;

impl PlanId {
    /// The accepted pattern, for messages.
    pub const PATTERN: &'static str = "lowercase letters, digits and `-`, starting with a letter or digit, at most 64 characters (e.g. `sql-windows`)";

    /// Validate `raw`.
    ///
    /// # Errors
    /// [`PlanError::InvalidId`] naming the value and the pattern.
    pub fn parse(raw: &str) -> Result<Self, PlanError> {
        let ok = !raw.is_empty()
            && raw.len() <= MAX_ID_LEN
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && raw
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(PlanError::InvalidId {
                value: raw.chars().take(80).collect(),
            })
        }
    }

    /// An id derived from a title (`SQL window functions` → `sql-window-functions`);
    /// `plan` when the title has no usable characters.
    #[must_use]
    pub fn from_title(title: &str) -> Self {
        let slug = crate::ids::config_slug(title);
        let cut: String = slug.chars().take(48).collect();
        let cut = cut.trim_end_matches('-');
        Self(if cut.is_empty() {
            "plan".to_owned()
        } else {
            cut.to_owned()
        })
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PlanId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_strict() {
        for good in ["sql-windows", "a", "0-x", &"a".repeat(64)] {
            assert!(PlanId::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "a\\b",
            ".hidden",
            "-x",
            "A",
            "a.md",
            "a b",
            "é",
            "a\0",
            &"a".repeat(65),
        ] {
            let err = PlanId::parse(bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid_id:"), "{bad}: {err}");
        }
        assert_eq!(
            PlanId::from_title("SQL Window Functions!").as_str(),
            "sql-window-functions"
        );
        assert_eq!(PlanId::from_title("../..").as_str(), "plan");
    }
}
