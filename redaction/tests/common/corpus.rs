//! The generated secret corpus (every vendor kind × every context) and the prose corpus,
//! shared by the ungated survival / false-positive tests and `just bench`.
//!
//! Every secret-shaped string is assembled at run time from a seeded generator, so no
//! key-shaped literal sits in the repository for a push-protection scanner to trip on.
//! A planted secret survives when any 12-character window of one of its letter-and-digit
//! runs (the parts every encoding leaves intact) is still in the redacted output, or, for
//! a summary, when the summary is accepted.

use serde_json::{Value, json};
use studyloop_redaction::Redactor;

/// The prose corpus: one ordinary sentence per line, written for the test.
pub const PROSE: &str = include_str!("../data/prose.txt");

/// The seed of the generator; printed by the bench so a figure can be reproduced.
pub const SEED: u64 = 0x5eed_0011_2233_4455;

/// The contexts every kind is planted in.
pub const CONTEXTS: [&str; 5] = ["plain", "json-escaped", "url", "split-lines", "key-only"];

/// The name under which the literal caller secret is registered.
pub const LITERAL_NAME: &str = "CALLER_SECRET";

/// The sentences of [`PROSE`] (blank lines and `#` comments skipped).
#[must_use]
pub fn sentences() -> Vec<&'static str> {
    PROSE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// splitmix64: small, seeded, good enough to make key-shaped noise.
pub struct Rng(u64);

impl Rng {
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// `n` characters of `alphabet`, re-drawn until every class the alphabet offers
    /// (lower, upper, digit) appears, as in a real random key.
    pub fn draw(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        loop {
            let s: String = (0..n)
                .map(|_| chars[(self.next() % chars.len() as u64) as usize])
                .collect();
            let has = |f: fn(&char) -> bool| !chars.iter().any(f) || s.chars().any(|c| f(&c));
            if has(char::is_ascii_lowercase)
                && has(char::is_ascii_uppercase)
                && has(char::is_ascii_digit)
            {
                return s;
            }
        }
    }
}

const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const HEX: &str = "0123456789abcdef";
const DIGITS: &str = "0123456789";

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
pub fn pct(value: &str) -> String {
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

/// Every vendor kind, generated from `rng`.
#[must_use]
pub fn secrets(rng: &mut Rng) -> Vec<Secret> {
    let mut out = Vec::new();
    let token = |kind: &'static str, name: &'static str, value: String| Secret {
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
    };
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
    let named =
        |kind: &'static str, name: &'static str, value: String, carrier: String, secret: String| {
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
        };
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
    out
}

/// The literal caller secret of `secrets` (registered with [`Redactor::with_secret`]).
#[must_use]
pub fn literal(secrets: &[Secret]) -> &str {
    &secrets
        .iter()
        .find(|s| s.kind == "literal-caller-secret")
        .expect("the corpus plants a literal secret")
        .value
}

/// One planted case: text to redact, or a summary to scan.
pub enum Planted {
    Text(String),
    Summary(Value),
}

fn escape(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `secret` planted in `context` (one of [`CONTEXTS`]), in every form that context takes.
#[must_use]
pub fn plant(secret: &Secret, context: &str) -> Vec<Planted> {
    let (name, value, carrier) = (secret.name, secret.value.as_str(), secret.carrier.as_str());
    let sentence = format!("Note from the session: {carrier} (do not share).");
    let pair = json!({ name: value }).to_string();
    match context {
        "plain" => vec![
            Planted::Text(sentence.clone()),
            Planted::Text(format!("{carrier}\nThe learner pasted that by mistake.")),
        ],
        "json-escaped" => vec![
            Planted::Text(json!({"learner": sentence}).to_string()),
            Planted::Text(escape(&pair)),
            Planted::Text(escape(&json!({"mentor_reply": carrier}).to_string())),
            Planted::Text(escape(&escape(&pair))),
        ],
        "url" => vec![
            Planted::Text(format!("Open {} to continue.", secret.url)),
            Planted::Text(json!({"url": secret.url}).to_string()),
        ],
        "split-lines" => {
            let indented = value.replace('\n', "\n    ");
            let yaml = format!("{name}:\n    {indented}\n");
            let json = format!("{{\n  \"{name}\":\n    {}\n}}", escape(value));
            vec![
                Planted::Text(escape(&yaml)),
                Planted::Text(escape(&json)),
                Planted::Text(yaml),
                Planted::Text(json),
                Planted::Text(format!("Before\n{}\nAfter", carrier.replace(' ', "\n"))),
            ]
        }
        "key-only" => {
            let mut out = vec![Planted::Summary(json!({
                "run_id": "20260101T000000Z-0123abcd",
                "journeys": { "journey::smoke": { name: value } },
            }))];
            if secret.self_identifying {
                out.push(Planted::Summary(json!({
                    "run_id": "20260101T000000Z-0123abcd",
                    "journeys": { value: "passed" },
                })));
                out.push(Planted::Text(json!({ value: true }).to_string()));
            }
            out
        }
        other => panic!("unknown context {other}"),
    }
}

/// The letter-and-digit runs of `secret` (8+ characters), cut into 12-character windows.
fn windows(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in secret
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|r| r.len() >= 8)
    {
        if run.len() <= 12 {
            out.push(run.to_owned());
        } else {
            out.extend((0..=run.len() - 12).map(|i| run[i..i + 12].to_owned()));
        }
    }
    assert!(
        !out.is_empty(),
        "a planted secret needs a run of 8+ letters and digits"
    );
    out
}

/// Whether any of `secret` survives `redactor` in `planted`.
#[must_use]
pub fn survives(redactor: &Redactor, secret: &Secret, planted: &Planted) -> bool {
    let out = match planted {
        Planted::Text(text) => redactor.redact(text),
        Planted::Summary(summary) => match redactor.summary(summary) {
            Ok(kept) => Value::Object(kept).to_string(),
            Err(_) => return false,
        },
    };
    windows(&secret.secret)
        .iter()
        .any(|w| out.contains(w.as_str()))
}

/// Survival over the whole corpus: `(survivors, cases, names of survivors)`.
#[must_use]
pub fn survival(redactor: &Redactor, secrets: &[Secret]) -> (usize, usize, Vec<String>) {
    let (mut survived, mut cases, mut names) = (0, 0, Vec::new());
    for secret in secrets {
        for context in CONTEXTS {
            for (i, planted) in plant(secret, context).iter().enumerate() {
                cases += 1;
                if survives(redactor, secret, planted) {
                    survived += 1;
                    names.push(format!("{} × {context}#{i}", secret.kind));
                }
            }
        }
    }
    (survived, cases, names)
}

/// False positives over the prose corpus: `(changed sentences, sentences, the changed
/// ones)`. A sentence counts once, changed raw or JSON-escaped.
#[must_use]
pub fn false_positives(redactor: &Redactor) -> (usize, usize, Vec<String>) {
    let all = sentences();
    let changed: Vec<String> = all
        .iter()
        .filter(|s| {
            let escaped = escape(s);
            redactor.redact(s) != **s || redactor.redact(&escaped) != escaped
        })
        .map(|s| format!("{s:?} -> {:?}", redactor.redact(s)))
        .collect();
    (changed.len(), all.len(), changed)
}
