//! A phase command, as data: one argv (MC015: a JSON array of literal
//! texts, no shell operators) that names no cluster context (MC008). Shared
//! by the deck validator (argvs) and the checker (script lines).

use serde_json::Value;

use super::finding::Findings;

/// Characters that only mean something to a shell (MC015).
pub(crate) const SHELL_CHARS: [char; 9] = [';', '|', '&', '>', '<', '`', '$', '\n', '\r'];
/// Switches that pick a cluster context themselves (MC008): the drill gets
/// exactly one context from core, never one the module chooses.
pub(crate) const CONTEXT_WORDS: [&str; 3] = ["--context", "--kubeconfig", "use-context"];

/// The argv of `cmd` (the deck's `key`), or `None` with MC015 findings.
pub(crate) fn argv_of(
    cmd: &Value,
    key: &str,
    file: &str,
    line: usize,
    out: &mut Findings,
) -> Option<Vec<String>> {
    let Value::Array(items) = cmd else {
        out.add(15, file, line, format!("`{key}` must be one argv, a JSON array like [\"scripts/check.sh\", \"arg\"], not {}", kind(cmd)));
        return None;
    };
    let argv: Option<Vec<String>> = items
        .iter()
        .map(|x| x.as_str().map(str::to_owned))
        .collect();
    let Some(argv) = argv.filter(|a| !a.is_empty()) else {
        out.add(15, file, line, format!("`{key}` must be a non-empty array of texts (the executable, then literal arguments)"));
        return None;
    };
    let mut ok = true;
    for arg in &argv {
        if let Some(c) = arg.chars().find(|c| SHELL_CHARS.contains(c)) {
            out.add(15, file, line, format!("argument `{}` of `{key}` holds the shell operator {c:?}; phases run without a shell, so pass literal arguments only", arg.escape_debug()));
            ok = false;
        }
    }
    ok.then_some(argv)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string (a shell line)",
        Value::Object(_) => "an object",
        _ => "a scalar",
    }
}

/// The MC008 word `text` holds as a whole word, if any (`--context`,
/// `--context=x`, `use-context`; not `--context-lines`).
pub(crate) fn context_word(text: &str) -> Option<&'static str> {
    CONTEXT_WORDS.into_iter().find(|w| {
        text.match_indices(w).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + w.len()..].chars().next();
            let edge = |c: Option<char>| {
                c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            };
            edge(before) && edge(after)
        })
    })
}
