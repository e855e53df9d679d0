//! The contexts issue 34's adversarial pass planted secrets in beyond the first five:
//! Markdown code, quotes, env exports, HTML attributes, nested JSON, the shapes a
//! redacted summary can take, and (the caller's literal secret only) every URL and
//! escape encoding.

use serde_json::{Value, json};

use super::{LITERAL_NAME, Planted, Secret};

const RUN: &str = "20260101T000000Z-0123abcd";

fn escape(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `text` as an HTML attribute value (`"` and `'` as entities).
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `secret` planted in one of the contexts `super::plant` does not handle itself.
pub fn plant(secret: &Secret, context: &str) -> Vec<Planted> {
    let (name, value, carrier) = (secret.name, secret.value.as_str(), secret.carrier.as_str());
    let text = |s: String| Planted::Text(s);
    match context {
        "markdown-code" => vec![
            text(format!("Run `{carrier}` and see what it prints.")),
            text(format!("The config:\n\n```\n{carrier}\n```\n")),
            text(format!("- **{name}**: `{value}`")),
        ],
        "quoted" => vec![
            text(format!("He typed '{carrier}' into the chat.")),
            text(format!("It said \"{carrier}\" on the screen.")),
            text(format!("{name} = {}", escape(value))),
        ],
        "env-export" => {
            let quoted = escape(value);
            vec![
                text(format!("export {name}={quoted}")),
                text(format!("{name}={quoted}\nOTHER=1")),
                text(format!("$ env | grep {name}\n{name}={value}")),
            ]
        }
        "html-attribute" => vec![
            text(format!(
                "<div class=\"note\" data-config=\"{}\"></div>",
                html(carrier)
            )),
            text(format!(
                "<input type=\"hidden\" name=\"q\" value='{}'>",
                html(carrier)
            )),
            text(format!("<pre><code>{}</code></pre>", html(carrier))),
        ],
        "json-nested" => vec![
            text(json!({"config": {"env": { name: value }}}).to_string()),
            text(json!({"steps": [{"output": {"lines": [carrier]}}]}).to_string()),
            text(escape(&json!({"a": [{"b": { name: value }}]}).to_string())),
        ],
        "summary" => summaries(secret),
        "encoded" => encoded(secret),
        other => panic!("unknown context {other}"),
    }
}

/// The shapes a redacted summary can carry a secret in: a reason, lines of a reason,
/// a value nested under its name, a Kubernetes-style name/value pair, a criterion note,
/// an escaped pair, an array under its name.
fn summaries(secret: &Secret) -> Vec<Planted> {
    let (name, value, carrier) = (secret.name, secret.value.as_str(), secret.carrier.as_str());
    let lines: Vec<&str> = if carrier.contains('\n') {
        carrier.lines().collect()
    } else {
        carrier.split(' ').collect()
    };
    let pair = json!({ name: value }).to_string();
    [
        json!({"run_id": RUN, "reasons": [carrier]}),
        json!({"run_id": RUN, "reasons": lines}),
        json!({"run_id": RUN, "journeys": {"j": { name: {"value": value} }}}),
        json!({"run_id": RUN, "journeys": {"j": {"env": [{"name": name, "value": value}]}}}),
        json!({"run_id": RUN, "per_criterion_scores": {"c1": {"score": 2, "note": carrier}}}),
        json!({"run_id": RUN, "arbitration_note": pair}),
        json!({"run_id": RUN, "journeys": {"j": { name: [value] }}}),
    ]
    .into_iter()
    .map(Planted::Summary)
    .collect()
}

/// The caller's literal secret in every encoding a URL, a form or an escaping JSON
/// writer gives it.
fn encoded(secret: &Secret) -> Vec<Planted> {
    if secret.name != LITERAL_NAME {
        return Vec::new();
    }
    let value = secret.value.as_str();
    let all = |lower: bool| -> String {
        value
            .bytes()
            .map(|b| {
                if lower {
                    format!("%{b:02x}")
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    };
    let component: String = value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.!~*'()".contains(c) {
                c.to_string()
            } else {
                c.to_string().bytes().map(|b| format!("%{b:02X}")).collect()
            }
        })
        .collect();
    let form = component.replace("%20", "+");
    let unicode: String = value
        .chars()
        .map(|c| format!("\\u{:04x}", u32::from(c)))
        .collect();
    [
        all(false),
        all(true),
        component,
        form,
        unicode.clone(),
        escape(&unicode),
        html(value),
    ]
    .into_iter()
    .map(|spelled| Planted::Text(format!("GET /api/echo?v={spelled}&n=1")))
    .collect()
}
