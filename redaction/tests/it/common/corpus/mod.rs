//! The generated secret corpus (every vendor kind × every context) and the prose corpus,
//! shared by the ungated survival / false-positive tests and `just bench`.
//!
//! Every secret-shaped string is assembled at run time from a seeded generator, so no
//! key-shaped literal sits in the repository for a push-protection scanner to trip on.
//! A planted secret survives when any 12-character window of one of its letter-and-digit
//! runs (the parts every encoding leaves intact) is still in the redacted output, or, for
//! a summary, when the summary is accepted.

mod contexts;
mod kinds_v3;
mod secrets;

use serde_json::{Value, json};
use studyloop_redaction::Redactor;

pub use secrets::{Secret, secrets};

/// The prose corpus: one ordinary sentence per line, written for the test.
pub const PROSE: &str = include_str!("../../data/prose.txt");

/// The code-and-prose corpus: Rust and Python code, shell, logs, git output, UUIDs,
/// sha256 digests, base64 images and URLs, one case per line (issue 34).
pub const CODE: &str = include_str!("../../data/code.txt");

/// The seed of the generator; printed by the bench so a figure can be reproduced.
pub const SEED: u64 = 0x5eed_0011_2233_4455;

/// The contexts every kind is planted in (`encoded` applies to the literal caller
/// secret only: a vendor pattern is not expected to read a fully `%`-encoded key, the
/// caller's own value is).
pub const CONTEXTS: [&str; 12] = [
    "plain",
    "json-escaped",
    "url",
    "split-lines",
    "key-only",
    "markdown-code",
    "quoted",
    "env-export",
    "html-attribute",
    "json-nested",
    "summary",
    "encoded",
];

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

/// The lines of [`CODE`], indentation kept (its `# ` header and blank lines skipped).
#[must_use]
pub fn code_lines() -> Vec<&'static str> {
    CODE.lines()
        .skip_while(|l| l.starts_with("# "))
        .filter(|l| !l.trim().is_empty())
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
        other => contexts::plant(secret, other),
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

/// Cases whose redacted text is not stable: a second look finds something in it or
/// rewrites it again (`(unstable, cases, names)`). A placeholder a rule matches again
/// mangles the output and costs the redactor a full pass per look (issue 34, rules v4).
#[must_use]
pub fn unstable(redactor: &Redactor, secrets: &[Secret]) -> (usize, usize, Vec<String>) {
    let (mut cases, mut names) = (0, Vec::new());
    for secret in secrets {
        for context in CONTEXTS {
            for (i, planted) in plant(secret, context).iter().enumerate() {
                let Planted::Text(text) = planted else {
                    continue;
                };
                cases += 1;
                let once = redactor.redact(text);
                if !redactor.findings(&once).is_empty() || redactor.redact(&once) != once {
                    names.push(format!("{} × {context}#{i}: {once:?}", secret.kind));
                }
            }
        }
    }
    (names.len(), cases, names)
}

/// False positives over the code-and-prose corpus: `(changed lines, lines, the changed
/// ones)`, as [`false_positives`].
#[must_use]
pub fn code_false_positives(redactor: &Redactor) -> (usize, usize, Vec<String>) {
    changed(redactor, &code_lines())
}

/// False positives over the prose corpus: `(changed sentences, sentences, the changed
/// ones)`. A sentence counts once, changed raw or JSON-escaped.
#[must_use]
pub fn false_positives(redactor: &Redactor) -> (usize, usize, Vec<String>) {
    changed(redactor, &sentences())
}

fn changed(redactor: &Redactor, all: &[&str]) -> (usize, usize, Vec<String>) {
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
