//! Everything the `studyloop-uat` tools print goes through one [`Out`]: each line is
//! rewritten by the pinned redaction rules plus the caller's known secret values before
//! it reaches stdout or stderr. Sign-off reasons quote recorded messages, manifest fields
//! and parser errors (a serde error quotes the bad value), so no output path may bypass
//! the redactor.

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_redaction::{RedactionRules, Redactor};

/// The tools' printer.
pub struct Out {
    redactor: Option<Redactor>,
}

impl Out {
    /// A printer redacting with the shipped rules and every credential-named variable
    /// of `env`. When the rules themselves cannot be loaded (a tampered pin) there is
    /// nothing to redact with: lines are printed as they are, and every command that
    /// needs the rules fails on loading them, naming the file.
    #[must_use]
    pub fn new(env: &CallerEnv) -> Self {
        let redactor = RedactionRules::load_default()
            .ok()
            .map(|rules| crate::secrets::redactor(&rules, env));
        Self { redactor }
    }

    /// The redactor, when the rules loaded.
    #[must_use]
    pub fn redactor(&self) -> Option<&Redactor> {
        self.redactor.as_ref()
    }

    /// `text` as it may be shown.
    #[must_use]
    pub fn clean(&self, text: &str) -> String {
        match &self.redactor {
            Some(r) => r.redact(text),
            None => text.to_owned(),
        }
    }

    /// Prints one redacted line to stdout.
    pub fn line(&self, text: impl AsRef<str>) {
        println!("{}", self.clean(text.as_ref()));
    }

    /// Prints one redacted line to stderr.
    pub fn err(&self, text: impl AsRef<str>) {
        eprintln!("{}", self.clean(text.as_ref()));
    }
}
