//! `studyloop drill PHASE MODULE/DECK/TASK`, up to consent: resolve the drill
//! in the VERIFIED snapshot (tampering is detected here, before anything is
//! shown), resolve the declared prerequisites on the user's PATH, show the
//! exact argv and the script's sha256, and ask **Run this phase now?** — the
//! typed answer `yes` on a terminal is the only consent (no `--yes`, no
//! answer from a non-TTY stdin).

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use super::check::check;
use super::digest;
use super::error::ModuleError;
use super::manifest::is_slug;
use super::store::Store;
use crate::env::Env;

/// The three phases.
pub(crate) const PHASES: [&str; 3] = ["setup", "check", "cleanup"];

/// Everything a phase run needs, resolved before consent.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The module id.
    pub(crate) module: String,
    /// `module/deck/task`.
    pub(crate) drill: String,
    /// `setup`, `check` or `cleanup`.
    pub(crate) phase: &'static str,
    /// The exact argv: the script's absolute path in the snapshot, then the
    /// literal arguments.
    pub(crate) argv: Vec<String>,
    /// The sha256 of the script.
    pub(crate) script_sha256: String,
    /// `verification.timeoutSeconds`.
    pub(crate) timeout_seconds: u64,
    /// Declared prerequisites, resolved on the user's PATH.
    pub(crate) prerequisites: Vec<(String, PathBuf)>,
    /// `target.kind`.
    pub(crate) target: String,
    /// What the learner sees.
    pub(crate) prompt: String,
    /// The product's own directories the phase must not see beyond the
    /// sandbox's list: the console token files (`web::token`), wherever
    /// `STUDYLOOP_SESSION_DIR` puts them.
    pub(crate) hidden: Vec<PathBuf>,
}

/// Splits `module/deck/task`, each part a slug. A bad reference is named in
/// the error clipped to 80 characters with controls and invisible format
/// characters escaped (it may come from a web request: huge, or holding bidi
/// overrides).
pub(crate) fn parse_id(drill: &str) -> Result<[&str; 3], ModuleError> {
    let bad = || {
        let mut shown = drill
            .chars()
            .take(80)
            .collect::<String>()
            .escape_debug()
            .to_string();
        if drill.chars().nth(80).is_some() {
            shown.push('…');
        }
        ModuleError::BadDrill(shown)
    };
    let parts: Vec<&str> = drill.split('/').collect();
    let [module, deck, task] = parts[..] else {
        return Err(bad());
    };
    if !parts.iter().all(|p| is_slug(p)) {
        return Err(bad());
    }
    Ok([module, deck, task])
}

/// Resolves `phase` of `drill` against the installed, verified snapshot.
pub(crate) fn plan(env: &Env, phase: &str, drill: &str) -> Result<Plan, ModuleError> {
    let phase = PHASES
        .into_iter()
        .find(|p| *p == phase)
        .ok_or_else(|| ModuleError::BadPhase(phase.to_owned()))?;
    let [module, deck_id, task_id] = parse_id(drill)?;
    let (_, snapshot) = Store::new(env)?.verified(module)?;
    let report = check(&snapshot)?;
    let unknown = |what, name: &str, known: Vec<&str>| ModuleError::UnknownDrill {
        what,
        name: name.to_owned(),
        module: module.to_owned(),
        known: known.join(", "),
    };
    let deck = report
        .decks
        .iter()
        .find(|d| d.id == deck_id)
        .ok_or_else(|| {
            unknown(
                "deck",
                deck_id,
                report.decks.iter().map(|d| d.id.as_str()).collect(),
            )
        })?;
    let task = deck.tasks.iter().find(|t| t.id == task_id).ok_or_else(|| {
        unknown(
            "task",
            task_id,
            deck.tasks.iter().map(|t| t.id.as_str()).collect(),
        )
    })?;
    let command = task
        .phases
        .iter()
        .find(|p| p.name == phase)
        .ok_or_else(|| ModuleError::NoPhase {
            drill: drill.to_owned(),
            phase: phase.to_owned(),
            has: match task
                .phases
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
            {
                s if s.is_empty() => "none".to_owned(),
                s => s,
            },
        })?;
    // The canonical path: the phase's view binds back only the real path of its
    // snapshot, so a config dir reached through `..` or a symlink (HOME under a
    // link, a checkout in /tmp) would make the exec fail inside it, and the argv
    // shown for consent must be the one that runs.
    let script = snapshot
        .canonicalize()
        .map_err(super::error::io("cannot resolve", &snapshot))?
        .join(&command.argv[0]);
    let bytes = report.tree.read(&command.argv[0])?;
    let manifest = report.manifest.unwrap_or_default();
    let prerequisites = manifest
        .prerequisites
        .iter()
        .map(|p| {
            crate::procs::which(env, p)
                .map(|path| (p.clone(), path))
                .ok_or_else(|| ModuleError::MissingPrerequisite(p.clone()))
        })
        .collect::<Result<_, _>>()?;
    let mut argv = vec![script.display().to_string()];
    argv.extend(command.argv[1..].iter().cloned());
    Ok(Plan {
        module: module.to_owned(),
        drill: drill.to_owned(),
        phase,
        argv,
        script_sha256: digest::of_bytes(&bytes),
        timeout_seconds: task.timeout_seconds,
        prerequisites,
        target: manifest.target.unwrap_or_default(),
        prompt: task.prompt.clone(),
        hidden: crate::settings::session_paths(env)
            .map(|p| vec![crate::console_token::token_dir(&p.dir)])
            .unwrap_or_default(),
    })
}

/// What the learner is shown before the question.
pub(crate) fn describe(plan: &Plan) -> String {
    let quoted: Vec<String> = plan.argv.iter().map(|a| format!("{a:?}")).collect();
    let mut text = format!(
        "Drill {} — {} phase\nTask: {}\nargv: [{}]\nsha256: {}\ntimeout: {} s, no shell, scratch HOME, minimal PATH\n",
        plan.drill,
        plan.phase,
        plan.prompt,
        quoted.join(", "),
        plan.script_sha256,
        plan.timeout_seconds
    );
    for (name, path) in &plan.prerequisites {
        let _ = writeln!(text, "prerequisite: {name} = {}", path.display());
    }
    text
}

/// Asks **Run this phase now?** and reads one line: only `yes` consents.
/// Refuses to ask when stdin is not a terminal.
pub(crate) fn consent(
    is_tty: bool,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> Result<bool, ModuleError> {
    if !is_tty {
        return Err(ModuleError::NotATerminal);
    }
    let _ = write!(output, "Run this phase now? Type yes to run it: ");
    let _ = output.flush();
    let mut answer = String::new();
    // Bounded: a pasted megabyte is not an answer.
    std::io::Read::take(&mut *input, 64)
        .read_line(&mut answer)
        .map_err(|source| ModuleError::Io {
            action: "cannot read the answer from",
            path: PathBuf::from("stdin"),
            source,
        })?;
    Ok(answer.trim() == "yes")
}
