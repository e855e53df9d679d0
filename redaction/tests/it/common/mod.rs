//! Shared fixtures for the redaction tests.

pub mod corpus;

/// Fake credentials of every vendor shape, assembled at run time so no key-shaped
/// literal sits in the source for a secret scanner to trip on.
#[must_use]
pub fn fake(kind: &str) -> String {
    let body = |n: usize| {
        "Ab3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z"
            .chars()
            .cycle()
            .take(n)
            .collect::<String>()
    };
    let upper = |n: usize| {
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
            .chars()
            .cycle()
            .take(n)
            .collect::<String>()
    };
    match kind {
        "openai" => format!("sk-{}", body(48)),
        "openai-project" => format!("sk-proj-{}", body(60)),
        "anthropic" => format!("sk-ant-api03-{}", body(80)),
        "aws" => format!("AKIA{}", upper(16)),
        "aws-temp" => format!("ASIA{}", upper(16)),
        "github" => format!("ghp_{}", body(36)),
        "github-oauth" => format!("gho_{}", body(36)),
        "github-server" => format!("ghs_{}", body(36)),
        "github-pat" => format!("github_pat_{}_{}", body(22), body(59)),
        "google" => format!("AIza{}", body(35)),
        "slack" => format!("xoxb-{}-{}", "123456789012", body(24)),
        "stripe-secret" => format!("sk_live_{}", body(24)),
        "stripe-restricted" => format!("rk_live_{}", body(24)),
        "stripe-publishable" => format!("pk_live_{}", body(24)),
        "jwt" => format!(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{}",
            body(43)
        ),
        other => panic!("no fake for {other}"),
    }
}
