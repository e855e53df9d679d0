//! `module.yaml`, validated field by field (not with `deny_unknown_fields`, which
//! stops at the first problem) so that `module check` lists every finding of
//! MC001 (schema, `extra: forbid`), MC002 (`contract: 1`), MC005
//! (prerequisites) and the declared half of MC006 (capability names).

use serde_json::{Map, Value};

use super::finding::{Findings, key_line, line_of};

/// The manifest file's name.
pub(crate) const FILE: &str = "module.yaml";
/// The contract version this StudyLoop speaks.
pub(crate) const CONTRACT: u64 = 1;
/// Core's prerequisite enum.
pub(crate) const PREREQUISITES: [&str; 3] = ["docker", "kind", "kubectl"];
/// The capability enum: the learner's terminal and the three phases.
pub(crate) const CAPABILITIES: [&str; 4] = ["terminal", "setup", "check", "cleanup"];
/// The target kinds.
pub(crate) const TARGETS: [&str; 2] = ["workdir", "kubeconfig-context"];
const REQUIRED_TEXT: [&str; 5] = ["id", "version", "title", "topic", "license"];
const KNOWN: [&str; 11] = [
    "id",
    "contract",
    "version",
    "title",
    "topic",
    "license",
    "maintainers",
    "prerequisites",
    "capabilities",
    "target",
    // `description` is the one optional free-text field.
    "description",
];

/// What the rest of the checker needs from a manifest.
#[derive(Debug, Clone, Default)]
pub(crate) struct Manifest {
    /// The module id (a slug), when valid.
    pub(crate) id: Option<String>,
    /// The version string, when present.
    pub(crate) version: Option<String>,
    /// Declared capabilities that are in the enum.
    pub(crate) capabilities: Vec<String>,
    /// Declared prerequisites that are in the enum.
    pub(crate) prerequisites: Vec<String>,
    /// `target.kind`, when valid.
    pub(crate) target: Option<String>,
}

/// Whether `s` is a slug: 1-63 of `[a-z0-9-]`, not starting or ending with `-`.
pub(crate) fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Validates the manifest text; `None` when it is not a YAML mapping at all.
pub(crate) fn check(text: &str, out: &mut Findings) -> Option<Manifest> {
    let value: Value = match studyloop_redaction::yaml::parse(text) {
        Ok(v) => v,
        Err(e) => {
            out.add(
                1,
                FILE,
                yaml_error_line(&e.detail),
                // The parser's first line; the rest is a source excerpt.
                format!(
                    "not valid YAML: {}",
                    e.detail.lines().next().unwrap_or_default()
                ),
            );
            return None;
        }
    };
    let Value::Object(map) = value else {
        out.add(1, FILE, 1, "the manifest must be a YAML mapping of fields");
        return None;
    };
    let mut m = Manifest::default();
    for key in map.keys() {
        if !KNOWN.contains(&key.as_str()) {
            out.add(
                1,
                FILE,
                key_line(text, key, 1),
                format!(
                    "unknown field `{key}` (extra: forbid); the fields are: {}",
                    KNOWN.join(", ")
                ),
            );
        }
    }
    for key in REQUIRED_TEXT {
        match map.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\n') => {}
            Some(_) => out.add(
                1,
                FILE,
                key_line(text, key, 1),
                format!("`{key}` must be a one-line text (quote numbers, e.g. version: \"1.0.0\")"),
            ),
            None => out.add(1, FILE, 1, format!("required field `{key}` is missing")),
        }
    }
    if let Some(Value::String(id)) = map.get("id") {
        if is_slug(id) {
            m.id = Some(id.clone());
        } else {
            out.add(
                1,
                FILE,
                key_line(text, "id", 1),
                format!("id `{id}` is not a slug; use 1-63 characters of a-z, 0-9 and '-'"),
            );
        }
    }
    if let Some(Value::String(v)) = map.get("version") {
        m.version = Some(v.clone());
    }
    maintainers(&map, text, out);
    contract(&map, text, out);
    m.prerequisites = prerequisites(&map, text, out);
    m.capabilities = capabilities(&map, text, out);
    m.target = target(&map, text, out);
    Some(m)
}

fn yaml_error_line(detail: &str) -> usize {
    // saphyr reports "line N column M"; fall back to 1.
    detail
        .split("line ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

fn maintainers(map: &Map<String, Value>, text: &str, out: &mut Findings) {
    let ok = match map.get("maintainers") {
        Some(Value::Array(list)) => {
            !list.is_empty()
                && list
                    .iter()
                    .all(|v| v.as_str().is_some_and(|s| !s.trim().is_empty()))
        }
        _ => false,
    };
    if !ok {
        out.add(
            1,
            FILE,
            key_line(text, "maintainers", 1),
            "`maintainers` must be a non-empty list of names (e.g. - Ada <ada@example.org>)",
        );
    }
}

fn contract(map: &Map<String, Value>, text: &str, out: &mut Findings) {
    match map.get("contract") {
        Some(v) if v.as_u64() == Some(CONTRACT) => {}
        Some(v) => out.add(
            2,
            FILE,
            key_line(text, "contract", 1),
            format!("contract {v} is not spoken here; this StudyLoop speaks contract: {CONTRACT}"),
        ),
        None => out.add(
            2,
            FILE,
            1,
            format!("`contract` is missing; add contract: {CONTRACT}"),
        ),
    }
}

fn prerequisites(map: &Map<String, Value>, text: &str, out: &mut Findings) -> Vec<String> {
    let mut ids = Vec::new();
    let Some(v) = map.get("prerequisites") else {
        return ids;
    };
    let line = key_line(text, "prerequisites", 1);
    let Value::Array(list) = v else {
        out.add(
            1,
            FILE,
            line,
            "`prerequisites` must be a list of {id: NAME}",
        );
        return ids;
    };
    for item in list {
        let Value::Object(item) = item else {
            out.add(
                1,
                FILE,
                line,
                "each prerequisite must be a mapping {id: NAME}",
            );
            continue;
        };
        for key in item.keys().filter(|k| *k != "id") {
            out.add(
                1,
                FILE,
                key_line(text, key, line),
                format!("unknown prerequisite field `{key}` (extra: forbid); the only field is id"),
            );
        }
        let id = item.get("id").and_then(Value::as_str).unwrap_or("");
        let at = line_of(text, id, line);
        if !PREREQUISITES.contains(&id) {
            out.add(
                5,
                FILE,
                at,
                format!(
                    "prerequisite `{id}` is not one of core's: {}",
                    PREREQUISITES.join(", ")
                ),
            );
        } else if ids.iter().any(|i| i == id) {
            out.add(5, FILE, at, format!("prerequisite `{id}` is listed twice"));
        } else {
            ids.push(id.to_owned());
        }
    }
    ids
}

fn capabilities(map: &Map<String, Value>, text: &str, out: &mut Findings) -> Vec<String> {
    let mut caps = Vec::new();
    let Some(v) = map.get("capabilities") else {
        return caps;
    };
    let line = key_line(text, "capabilities", 1);
    let Value::Array(list) = v else {
        out.add(6, FILE, line, "`capabilities` must be a list of names");
        return caps;
    };
    for c in list {
        let name = c.as_str().unwrap_or("");
        if !CAPABILITIES.contains(&name) {
            out.add(
                6,
                FILE,
                line_of(text, c.to_string().trim_matches('"'), line),
                format!("capability {c} is not one of: {}", CAPABILITIES.join(", ")),
            );
        } else if caps.iter().any(|x| x == name) {
            out.add(
                6,
                FILE,
                line,
                format!("capability `{name}` is declared twice"),
            );
        } else {
            caps.push(name.to_owned());
        }
    }
    caps
}

fn target(map: &Map<String, Value>, text: &str, out: &mut Findings) -> Option<String> {
    let line = key_line(text, "target", 1);
    let Some(Value::Object(t)) = map.get("target") else {
        out.add(
            1,
            FILE,
            line,
            format!(
                "`target` must be a mapping {{kind: KIND}}, KIND one of: {}",
                TARGETS.join(", ")
            ),
        );
        return None;
    };
    for key in t.keys().filter(|k| *k != "kind") {
        out.add(
            1,
            FILE,
            key_line(text, key, line),
            format!("unknown target field `{key}` (extra: forbid); the only field is kind"),
        );
    }
    match t.get("kind").and_then(Value::as_str) {
        Some(k) if TARGETS.contains(&k) => Some(k.to_owned()),
        other => {
            out.add(
                1,
                FILE,
                key_line(text, "kind", line),
                format!(
                    "target.kind {} is not one of: {}",
                    other.unwrap_or("(missing)"),
                    TARGETS.join(", ")
                ),
            );
            None
        }
    }
}
