use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::*;

/// Every step and check name this crate's sources can record, with a file
/// that records it: the literal passed to `step`, `step_doing`, `verify`,
/// `check` and `check_if`, a `const` passed to them, a `format!` (its
/// placeholders as `*`) and a hand-built `CheckRecord`'s name. Test code is
/// left out (`*_tests.rs`, `tests.rs`, and a file's `#[cfg(test)]` tail).
fn emitted_names() -> BTreeMap<String, String> {
    let s = r#""((?:[^"\\]|\\.)*)""#;
    let call = r"\b(?:step|step_doing|verify|check)\(\s*";
    let literal = [
        regex::Regex::new(&format!("{call}{s}")).unwrap(),
        regex::Regex::new(&format!(r"\bcheck_if\(\s*[^,]+,\s*{s}")).unwrap(),
        regex::Regex::new(&format!(r"{call}&?format!\(\s*{s}")).unwrap(),
        regex::Regex::new(&format!(r"CheckRecord \{{\s*name:\s*format!\(\s*{s}")).unwrap(),
    ];
    let const_use = regex::Regex::new(&format!(r"{call}([A-Z][A-Z0-9_]+)\b")).unwrap();
    let const_def = regex::Regex::new(&format!(r"const ([A-Z][A-Z0-9_]+): &str = {s}")).unwrap();
    let placeholder = regex::Regex::new(r"\{[^}]*\}").unwrap();
    let mut files = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "tests" {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") && !name.ends_with("_tests.rs") && name != "tests.rs" {
                let text = std::fs::read_to_string(&p).unwrap();
                let text = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_owned(),
                    None => text,
                };
                files.push((p, text));
            }
        }
    }
    let consts: BTreeMap<String, String> = files
        .iter()
        .flat_map(|(_, t)| {
            const_def
                .captures_iter(t)
                .map(|c| (c[1].to_owned(), c[2].to_owned()))
        })
        .collect();
    let mut names = BTreeMap::new();
    for (path, text) in &files {
        let shown = path.display().to_string();
        for re in &literal {
            for c in re.captures_iter(text) {
                let name = placeholder.replace_all(&c[1], "*").into_owned();
                names.entry(name).or_insert_with(|| shown.clone());
            }
        }
        for c in const_use.captures_iter(text) {
            if let Some(v) = consts.get(&c[1]) {
                names.entry(v.clone()).or_insert_with(|| shown.clone());
            }
        }
    }
    names
}

#[test]
fn every_step_and_check_the_case_engine_records_has_a_row() {
    let names = emitted_names();
    // The scan itself must find the steps the drift docs name.
    for known in [
        "harness ready",
        "turn 1",
        "turn * fidelity at its floor",
        "finish",
    ] {
        assert!(
            names.contains_key(known),
            "the scan missed `{known}`: {names:?}"
        );
    }
    let missing: Vec<String> = names
        .iter()
        .filter(|(n, _)| rule(n).is_none())
        .map(|(n, f)| format!("`{n}` ({f})"))
        .collect();
    assert!(
        missing.is_empty(),
        "steps without a row in drift_rows::RULES (add one, or mark it NotAnAdapterFact): {}",
        missing.join(", ")
    );
    // And no rule is stale: each names something still recorded.
    let patterns: BTreeSet<&str> = names.keys().map(String::as_str).collect();
    let stale: Vec<&str> = RULES
        .iter()
        .map(|r| r.name)
        .filter(|p| !patterns.iter().any(|n| matches(p, n)))
        .collect();
    assert!(stale.is_empty(), "rules naming no recorded step: {stale:?}");
}

#[test]
fn a_broken_step_names_the_spec_field_and_the_product_row() {
    let ready = rows_to_change("codex", "cli-tmux::codex", "harness ready");
    assert_eq!(ready.fact, Some(AdapterFact::ReadyMarker));
    assert_eq!(
        ready.harness_spec.as_deref(),
        Some("acceptance/src/harness_spec/table.rs: SPECS[codex].markers.ready, ready_timeout")
    );
    assert_eq!(
        ready.product.as_deref(),
        Some("product/studyloop/src/adapters/table.rs: ADAPTERS[codex].fresh")
    );
    let paste = rows_to_change(
        "claude",
        "cli-tmux::claude::paste",
        "no tmux command ran (marker file absent)",
    );
    assert_eq!(paste.fact, Some(AdapterFact::PasteMode));
    assert_eq!(paste.product, None, "the product does not paste");
    let store = rows_to_change("pi", "cli-tmux::pi", "turn 2 fidelity at its floor");
    assert_eq!(store.fact, Some(AdapterFact::SessionStore));
    assert!(
        store
            .harness_spec
            .unwrap()
            .contains("SPECS[pi].reply_source")
    );
    // The same name in an ACP trial is the ACP adapter's fact.
    let over = rows_to_change("codex", "web-acp::codex", "conversation");
    assert_eq!(over.fact, Some(AdapterFact::AcpInitialize));
    assert_eq!(
        rows_to_change("codex", "cli-tmux::codex", "conversation").fact,
        Some(AdapterFact::TurnMarkers)
    );
    // Unknown is None, never a guessed row.
    let unknown = rows_to_change("codex", "cli-tmux::codex", "a step nobody wrote");
    assert_eq!(
        (unknown.fact, unknown.harness_spec, unknown.product),
        (None, None, None)
    );
    let stranger = rows_to_change("someone", "cli-tmux::someone", "harness ready");
    assert_eq!(stranger.fact, Some(AdapterFact::ReadyMarker));
    assert_eq!((stranger.harness_spec, stranger.product), (None, None));
}

#[test]
fn star_matches_a_formatted_part() {
    assert!(matches(
        "turn * fidelity at its floor",
        "turn 12 fidelity at its floor"
    ));
    assert!(matches("resize to *x*", "resize to 1280x800"));
    assert!(matches("goto *", "goto "));
    assert!(!matches("turn * fidelity at its floor", "turn 1 fidelity"));
    assert!(!matches("finish", "finished"));
    assert!(!matches("finish", "the finish"));
}
