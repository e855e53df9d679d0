//! The vendor kinds of the generated corpus: each secret assembled at run time from a
//! seeded generator, with the name it is stored under, the text that identifies it, its
//! URL form and the sensitive part whose survival is measured.

use serde_json::json;

use super::{LITERAL_NAME, Rng};

pub(super) const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub(super) const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub(super) const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub(super) const HEX: &str = "0123456789abcdef";
pub(super) const DIGITS: &str = "0123456789";

/// One planted secret.
pub struct Secret {
    /// The vendor kind, e.g. `npm-token`.
    pub kind: &'static str,
    /// The name it is stored under (env var, JSON key, header).
    pub name: &'static str,
    /// The value stored under `name`.
    pub value: String,
    /// The smallest text that identifies it (the value itself for self-identifying
    /// shapes; `name` + separator + value for shapes only a name identifies).
    pub carrier: String,
    /// How it appears in a URL.
    pub url: String,
    /// The sensitive part whose letter-and-digit runs must not survive.
    pub secret: String,
    /// Whether the value alone identifies it (then it is also planted as a map key).
    pub self_identifying: bool,
}

fn pem(rng: &mut Rng, label: &str) -> (String, String) {
    let body: Vec<String> = (0..6).map(|_| rng.draw(B64, 64)).collect();
    let body = body.join("\n");
    (
        format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----"),
        body,
    )
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
#[must_use]
fn pct(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A self-identifying kind: its value is its own carrier.
pub(super) fn token(kind: &'static str, name: &'static str, value: String) -> Secret {
    Secret {
        kind,
        name,
        carrier: value.clone(),
        url: format!(
            "https://api.example.test/v1/hooks/{}/run?ref=study",
            pct(&value)
        ),
        secret: value.clone(),
        value,
        self_identifying: true,
    }
}

/// A kind only its name (or its context) identifies.
pub(super) fn named(
    kind: &'static str,
    name: &'static str,
    value: String,
    carrier: String,
    secret: String,
) -> Secret {
    let url = format!(
        "https://app.example.test/callback?state=ok&{name}={}&next=%2F",
        pct(&value)
    );
    Secret {
        kind,
        name,
        value,
        carrier,
        url,
        secret,
        self_identifying: false,
    }
}

/// Every vendor kind, generated from `rng`.
#[must_use]
pub fn secrets(rng: &mut Rng) -> Vec<Secret> {
    let mut out = Vec::new();
    let tokens = [
        (
            "openai-key",
            "OPENAI_API_KEY",
            format!("sk-{}", rng.draw(B62, 48)),
        ),
        (
            "openai-project-key",
            "OPENAI_API_KEY",
            format!("sk-{}-{}", "proj", rng.draw(B64URL, 120)),
        ),
        (
            "openai-service-account-key",
            "OPENAI_API_KEY",
            format!("sk-{}-{}", "svcacct", rng.draw(B64URL, 100)),
        ),
        (
            "openrouter-key",
            "OPENROUTER_API_KEY",
            format!("sk-{}-{}", "or-v1", rng.draw(HEX, 64)),
        ),
        (
            "anthropic-key",
            "ANTHROPIC_API_KEY",
            format!("sk-{}-api03-{}AA", "ant", rng.draw(B64URL, 93)),
        ),
        (
            "aws-access-key-id",
            "aws_access_key_id",
            format!("{}{}", "AKIA", rng.draw(UPPER_DIGITS, 16)),
        ),
        (
            "aws-temporary-key-id",
            "aws_access_key_id",
            format!("{}{}", "ASIA", rng.draw(UPPER_DIGITS, 16)),
        ),
        (
            "github-classic-token",
            "GITHUB_TOKEN",
            format!("{}_{}", "ghp", rng.draw(B62, 36)),
        ),
        (
            "github-oauth-token",
            "GH_TOKEN",
            format!("{}_{}", "gho", rng.draw(B62, 36)),
        ),
        (
            "github-app-token",
            "GH_TOKEN",
            format!("{}_{}", "ghs", rng.draw(B62, 36)),
        ),
        (
            "github-fine-grained-token",
            "GH_TOKEN",
            format!(
                "{}_{}_{}",
                "github_pat",
                rng.draw(B62, 22),
                rng.draw(B62, 59)
            ),
        ),
        (
            "google-api-key",
            "GOOGLE_API_KEY",
            format!("{}{}", "AIza", rng.draw(B64URL, 35)),
        ),
        (
            "slack-bot-token",
            "SLACK_TOKEN",
            format!(
                "{}-{}-{}-{}",
                "xoxb",
                rng.draw(DIGITS, 12),
                rng.draw(DIGITS, 13),
                rng.draw(B62, 24)
            ),
        ),
        (
            "slack-app-token",
            "SLACK_APP_TOKEN",
            format!(
                "{}-1-A0{}-{}-{}",
                "xapp",
                rng.draw(UPPER_DIGITS, 9),
                rng.draw(DIGITS, 13),
                rng.draw(HEX, 64)
            ),
        ),
        (
            "stripe-secret-key",
            "STRIPE_KEY",
            format!("{}_{}_{}", "sk", "live", rng.draw(B62, 99)),
        ),
        (
            "stripe-restricted-key",
            "STRIPE_KEY",
            format!("{}_{}_{}", "rk", "live", rng.draw(B62, 99)),
        ),
        (
            "huggingface-token",
            "HF_TOKEN",
            format!("{}_{}", "hf", rng.draw(B62, 34)),
        ),
        (
            "npm-token",
            "NPM_TOKEN",
            format!("{}_{}", "npm", rng.draw(B62, 36)),
        ),
        (
            "jwt",
            "id_token",
            format!(
                "{}{}.{}{}.{}",
                "eyJ",
                rng.draw(B64URL, 30),
                "eyJ",
                rng.draw(B64URL, 80),
                rng.draw(B64URL, 43)
            ),
        ),
        (
            "jwt-opaque-payload",
            "session",
            format!(
                "{}{}.{}.{}",
                "eyJ",
                rng.draw(B64URL, 30),
                rng.draw(B64URL, 90),
                rng.draw(B64URL, 43)
            ),
        ),
    ];
    for (kind, name, value) in tokens {
        out.push(token(kind, name, value));
    }
    let v = rng.draw(B64, 40);
    out.push(named(
        "aws-secret-access-key",
        "aws_secret_access_key",
        v.clone(),
        format!("aws_secret_access_key = {v}"),
        v,
    ));
    let v = rng.draw(B64, 40);
    out.push(named(
        "aws-secret-access-key-cli",
        "SecretAccessKey",
        v.clone(),
        format!("\"SecretAccessKey\": \"{v}\""),
        v,
    ));
    let v = format!("{}==", rng.draw(B64, 86));
    out.push(named("azure-storage-account-key", "AccountKey", v.clone(), format!("DefaultEndpointsProtocol=https;AccountName=studyacct;AccountKey={v};EndpointSuffix=core.windows.net"), v));
    let v = format!("{}=", rng.draw(B64, 43));
    out.push(named("azure-shared-access-key", "SharedAccessKey", v.clone(), format!("Endpoint=sb://study.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={v}"), v));
    let sig = format!("{}=", rng.draw(B64, 43));
    let sas = format!(
        "https://studyacct.blob.core.windows.net/notes/a.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-01T00:00:00Z&sig={}",
        pct(&sig)
    );
    out.push(named("azure-sas-url", "sas_url", sas.clone(), sas, sig));
    let v = rng.draw(HEX, 40);
    out.push(named(
        "gcp-private-key-id",
        "private_key_id",
        v.clone(),
        format!("\"private_key_id\": \"{v}\""),
        v,
    ));
    let (block, body) = pem(rng, "PRIVATE KEY");
    let service_account = json!({"type": "service_account", "project_id": "study-loop", "private_key": block, "client_email": "ci@study-loop.iam.gserviceaccount.com"});
    out.push(named(
        "gcp-service-account-private-key",
        "private_key",
        block,
        service_account.to_string(),
        body,
    ));
    let (block, body) = pem(rng, "RSA PRIVATE KEY");
    out.push(named(
        "pem-rsa-private-key",
        "ssh_private_key",
        block.clone(),
        block,
        body,
    ));
    let (block, body) = pem(rng, "OPENSSH PRIVATE KEY");
    out.push(named(
        "pem-openssh-private-key",
        "deploy_key",
        block.clone(),
        block,
        body,
    ));
    let pw = rng.draw(B62, 20);
    let v = format!("postgres://app:{pw}@db.internal:5432/study");
    let mut url_creds = named("url-credentials", "DATABASE_URL", v.clone(), v.clone(), pw);
    url_creds.url = format!("{v}?sslmode=require");
    out.push(url_creds);
    let tok = format!("{}.{}", rng.draw(B62, 24), rng.draw(B64URL, 16));
    let mut bearer = named(
        "bearer-token",
        "Authorization",
        format!("Bearer {tok}"),
        format!("Authorization: Bearer {tok}"),
        tok.clone(),
    );
    bearer.url = format!("https://app.example.test/cb#access_token={tok}&token_type=bearer");
    out.push(bearer);
    let v = rng.draw(HEX, 32);
    out.push(named(
        "api-key-assignment",
        "X_API_KEY",
        v.clone(),
        format!("X_API_KEY={v}"),
        v,
    ));
    let v = format!("{}!#{}", rng.draw(B62, 12), rng.draw(B62, 8));
    out.push(named(
        "password-assignment",
        "password",
        v.clone(),
        format!("password: {v}"),
        v,
    ));
    let v = rng.draw(B64URL, 40);
    out.push(named(
        "client-secret",
        "client_secret",
        v.clone(),
        format!("client_secret={v}"),
        v,
    ));
    let v = format!("q\"{}\\{}'z", rng.draw(B62, 12), rng.draw(B62, 12));
    out.push(named(
        "literal-caller-secret",
        LITERAL_NAME,
        v.clone(),
        format!("the value is {v} today"),
        v,
    ));
    super::kinds_v3::tokens(rng, &mut out);
    super::kinds_v3::contextual(rng, &mut out);
    out
}
