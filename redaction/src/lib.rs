//! Redaction: the pinned rules file (`rules_v1.yaml`: the allow-listed summary
//! fields and every detection pattern), the redacted-summary generator that is
//! the only artefact allowed to leave a private evidence bundle, and a
//! `Redactor` that rewrites free text with stable placeholders.
