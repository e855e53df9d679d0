//! [`Violation`]: one leak found in a redacted summary. A leaf, so the error enum
//! (which carries violations) and the summary scan (which finds them) do not import
//! each other.

use std::fmt;

/// Which part of a JSON entry leaked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// An object key.
    Key,
    /// A string value.
    Value,
}

/// One leak found in a summary. Its path is rendered with the offending text already
/// redacted, so reporting a violation never repeats the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where: `$`, then `.key` and `[index]` steps (keys shown redacted).
    pub path: String,
    /// Key or value.
    pub part: Part,
    /// The rule that matched (pattern id or `known-secret:<NAME>`).
    pub rule: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = match self.part {
            Part::Key => "key",
            Part::Value => "value",
        };
        write!(f, "{part} at `{}` matches `{}`", self.path, self.rule)
    }
}
