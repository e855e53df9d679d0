//! `decks/*.json`: StudyLoop's PracticeDeck with the module contract's added
//! fields, validated field by field for MC004 (deck shape), MC010 (task
//! fields), MC014 (deck and task ids), MC015 (one argv per phase, no shell
//! operators) and the argv half of MC008 (no cluster-context switches).

use serde_json::{Map, Value};

use super::argv::{argv_of, context_word};
use super::finding::{Findings, key_line, line_of};
use super::manifest::is_slug;

/// The directory decks live in.
pub(crate) const DIR: &str = "decks";
/// The scaffolding levels a task with a solution names.
pub(crate) const SCAFFOLDING: [&str; 4] = ["none", "light", "guided", "worked"];
/// The phases, with their `verification` field.
pub(crate) const PHASES: [(&str, &str); 3] = [
    ("setup", "setupCommand"),
    ("check", "checkCommand"),
    ("cleanup", "cleanupCommand"),
];
/// The default and the largest `verification.timeoutSeconds`.
pub(crate) const DEFAULT_TIMEOUT: u64 = 60;
/// See [`DEFAULT_TIMEOUT`].
pub(crate) const MAX_TIMEOUT: u64 = 3_600;

const DECK_KEYS: [&str; 4] = ["id", "title", "description", "tasks"];
const TASK_KEYS: [&str; 9] = [
    "id",
    "prompt",
    "successCriteria",
    "expectedLearningOutcome",
    "hint",
    "solution",
    "scaffolding",
    "mentorNotes",
    "verification",
];
const VERIFICATION_KEYS: [&str; 4] = [
    "setupCommand",
    "checkCommand",
    "cleanupCommand",
    "timeoutSeconds",
];

/// One phase command of a task.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// `setup`, `check` or `cleanup`.
    pub(crate) name: &'static str,
    /// The argv (valid per MC015 or not; [`Phase::valid`] says).
    pub(crate) argv: Vec<String>,
    /// Whether the argv passed MC015.
    pub(crate) valid: bool,
    /// Its line in the deck file.
    pub(crate) line: usize,
}

/// A task, as far as the rest of the checker and the runner need it.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    /// The task id.
    pub(crate) id: String,
    /// What the learner sees.
    pub(crate) prompt: String,
    /// The success criteria (the learner sees these too).
    pub(crate) criteria: Vec<String>,
    /// Whether the task has a `verification` object (it uses `terminal`).
    pub(crate) verified: bool,
    /// Its phase commands.
    pub(crate) phases: Vec<Phase>,
    /// `verification.timeoutSeconds` (per phase).
    pub(crate) timeout_seconds: u64,
}

/// A deck.
#[derive(Debug, Clone)]
pub(crate) struct Deck {
    /// The file, relative to the module root.
    pub(crate) file: String,
    /// The deck id.
    pub(crate) id: String,
    /// Its tasks.
    pub(crate) tasks: Vec<Task>,
}

/// Validates one deck file's text.
pub(crate) fn check(file: &str, text: &str, out: &mut Findings) -> Option<Deck> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.add(4, file, e.line(), format!("not valid JSON: {e}"));
            return None;
        }
    };
    let Value::Object(map) = value else {
        out.add(
            4,
            file,
            1,
            "a deck must be a JSON object {\"id\", \"tasks\": [...]}",
        );
        return None;
    };
    unknown_keys(&map, &DECK_KEYS, "deck", file, text, 1, out);
    let id = slug_field(&map, "deck", file, 1, out);
    let Some(Value::Array(tasks)) = map.get("tasks") else {
        out.add(
            4,
            file,
            key_line(text, "tasks", 1),
            "`tasks` must be a non-empty array of task objects",
        );
        return None;
    };
    if tasks.is_empty() {
        out.add(
            4,
            file,
            key_line(text, "tasks", 1),
            "`tasks` is empty; a deck holds at least one task",
        );
    }
    let mut deck = Deck {
        file: file.to_owned(),
        id: id.unwrap_or_default(),
        tasks: Vec::new(),
    };
    let mut from = key_line(text, "tasks", 1);
    for task in tasks {
        let Value::Object(task) = task else {
            out.add(4, file, from, "each task must be a JSON object");
            continue;
        };
        let tid = task.get("id").and_then(Value::as_str).unwrap_or("");
        let line = if tid.is_empty() {
            from
        } else {
            line_of(text, &format!("\"{tid}\""), from)
        };
        from = line;
        let t = check_task(task, file, text, line, out);

        if !t.id.is_empty() && deck.tasks.iter().any(|x| x.id == t.id) {
            out.add(
                14,
                file,
                line,
                format!(
                    "task id `{}` is used twice in this deck; task ids are unique within a deck",
                    t.id
                ),
            );
        }
        deck.tasks.push(t);
    }
    Some(deck)
}

fn unknown_keys(
    map: &Map<String, Value>,
    known: &[&str],
    what: &str,
    file: &str,
    text: &str,
    line: usize,
    out: &mut Findings,
) {
    for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
        out.add(
            4,
            file,
            key_line(text, key, line),
            format!(
                "unknown {what} field `{key}`; the fields are: {}",
                known.join(", ")
            ),
        );
    }
}

fn slug_field(
    map: &Map<String, Value>,
    what: &str,
    file: &str,
    line: usize,
    out: &mut Findings,
) -> Option<String> {
    match map.get("id").and_then(Value::as_str) {
        Some(id) if is_slug(id) => Some(id.to_owned()),
        Some(id) => {
            out.add(
                14,
                file,
                line,
                format!("{what} id `{id}` is not a slug; use 1-63 characters of a-z, 0-9 and '-'"),
            );
            None
        }
        None => {
            out.add(
                14,
                file,
                line,
                format!(
                    "the {what} has no `id`; every deck and task needs one (a slug, e.g. ready-01)"
                ),
            );
            None
        }
    }
}

fn text_field(task: &Map<String, Value>, key: &str) -> Option<String> {
    task.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

fn check_task(
    task: &Map<String, Value>,
    file: &str,
    text: &str,
    line: usize,
    out: &mut Findings,
) -> Task {
    unknown_keys(task, &TASK_KEYS, "task", file, text, line, out);
    let id = slug_field(task, "task", file, line, out);
    let prompt = text_field(task, "prompt");
    if prompt.is_none() {
        out.add(
            10,
            file,
            line,
            "the task has no `prompt` (the text the learner sees)",
        );
    }
    if text_field(task, "expectedLearningOutcome").is_none() {
        out.add(10, file, line, "the task has no `expectedLearningOutcome`");
    }
    let criteria_ok = matches!(task.get("successCriteria"), Some(Value::Array(c))
        if !c.is_empty() && c.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty())));
    if !criteria_ok {
        out.add(
            10,
            file,
            line,
            "`successCriteria` must list at least one criterion (non-empty texts)",
        );
    }
    for key in ["hint", "solution", "mentorNotes"] {
        if task.get(key).is_some_and(|v| !v.is_string()) {
            out.add(
                10,
                file,
                key_line(text, key, line),
                format!("`{key}` must be a text"),
            );
        }
    }
    match task.get("scaffolding") {
        None if task.contains_key("solution") => out.add(
            10,
            file,
            key_line(text, "solution", line),
            format!(
                "the task has a `solution` but no `scaffolding` level; add one of: {}",
                SCAFFOLDING.join(", ")
            ),
        ),
        Some(v) if !v.as_str().is_some_and(|s| SCAFFOLDING.contains(&s)) => out.add(
            10,
            file,
            key_line(text, "scaffolding", line),
            format!("scaffolding {v} is not one of: {}", SCAFFOLDING.join(", ")),
        ),
        _ => {}
    }
    // A task with a bad id is still a task: its phases count for MC006/MC016.
    let raw_id = task.get("id").and_then(Value::as_str).unwrap_or_default();
    let mut t = Task {
        id: id.unwrap_or_else(|| raw_id.to_owned()),
        prompt: prompt.unwrap_or_default(),
        criteria: match task.get("successCriteria") {
            Some(Value::Array(c)) => c
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        },
        verified: false,
        phases: Vec::new(),
        timeout_seconds: DEFAULT_TIMEOUT,
    };
    if let Some(v) = task.get("verification") {
        verification(v, file, text, line, out, &mut t);
    }
    t
}

fn verification(v: &Value, file: &str, text: &str, line: usize, out: &mut Findings, t: &mut Task) {
    let at = key_line(text, "verification", line);
    let Value::Object(v) = v else {
        out.add(
            4,
            file,
            at,
            "`verification` must be an object of phase commands",
        );
        return;
    };
    t.verified = true;
    unknown_keys(v, &VERIFICATION_KEYS, "verification", file, text, at, out);
    match v.get("timeoutSeconds") {
        None => {}
        Some(n) => match n.as_u64() {
            Some(s) if (1..=MAX_TIMEOUT).contains(&s) => t.timeout_seconds = s,
            _ => out.add(
                4,
                file,
                key_line(text, "timeoutSeconds", at),
                format!(
                    "timeoutSeconds {n} must be a whole number of seconds from 1 to {MAX_TIMEOUT}"
                ),
            ),
        },
    }
    if !PHASES.iter().any(|(_, key)| v.contains_key(*key)) {
        out.add(4, file, at, "`verification` names no phase; give at least one of setupCommand, checkCommand, cleanupCommand");
    }
    for (name, key) in PHASES {
        let Some(cmd) = v.get(key) else { continue };
        let l = key_line(text, key, at);
        let argv = argv_of(cmd, key, file, l, out);
        let valid = argv.is_some();
        let argv = argv.unwrap_or_default();
        for arg in &argv {
            if let Some(word) = context_word(arg) {
                out.add(8, file, l, format!("`{word}` in the {name} command: a drill never picks its own cluster context; core sets KUBECONFIG to exactly one"));
            }
        }
        t.phases.push(Phase {
            name,
            argv,
            valid,
            line: l,
        });
    }
}
