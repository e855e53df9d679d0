//! The doctor's report: every read-only check in order (core, config, database, scope,
//! session state, the harnesses, then installed modules' prerequisites), its exit code and its text rendering.

use std::fmt::Write as _;

use serde::Serialize;

use super::check::{Check, HarnessInfo, Verdict, check};
use super::containment;
use super::harnesses;
use super::prerequisites::{self, PrerequisiteInfo};
use crate::context::Ctx;
use crate::{config, scope, settings, state, store, tmux};

/// The fix of every session-state problem.
const FIX: &str = "run `studyloop doctor --fix` (it keeps damaged files and rebuilds the state from the history DB and tmux)";

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// The six harnesses.
    pub harnesses: Vec<HarnessInfo>,
    /// Every prerequisite each installed module declares, as found.
    pub prerequisites: Vec<PrerequisiteInfo>,
    /// 0, 1 or 2.
    pub exit_code: u8,
}

/// Run every check.
pub fn run(ctx: &Ctx) -> Report {
    let mut checks = Vec::new();
    match tmux::Tmux::new(&ctx.env).and_then(|t| t.check_version()) {
        Ok(v) => checks.push(check("tmux", "core", Verdict::Ok, v, None, true)),
        Err(e) => checks.push(check(
            "tmux",
            "core",
            Verdict::Fail,
            e.to_string(),
            Some("install tmux 3.1 or later"),
            true,
        )),
    }
    checks.push(match containment::probe(&ctx.exe) {
        containment::Containment::Namespace => check(
            "containment",
            "core",
            Verdict::Ok,
            "a session's harness runs in a PID namespace of its own",
            None,
            false,
        ),
        containment::Containment::Subreaper(reason) => check(
            "containment",
            "core",
            Verdict::Warn,
            format!("no PID namespace for a session's harness ({reason}); it runs under a subreaper, and a process that outlives a killed `studyloop contain` can escape"),
            Some("allow user namespaces (e.g. `sysctl user.max_user_namespaces`, a container run with them) or run as root"),
            false,
        ),
        containment::Containment::Unknown(why) => check(
            "containment",
            "core",
            Verdict::Warn,
            format!("cannot tell how a session's harness is contained: {why}"),
            None,
            false,
        ),
    });
    let config_file = settings::config_file(&ctx.env);
    let loaded = match &config_file {
        Err(e) => {
            checks.push(check(
                "paths",
                "core",
                Verdict::Fail,
                e.to_string(),
                Some("set HOME"),
                true,
            ));
            None
        }
        Ok(path) => match config::load(path) {
            Ok(l) => {
                // A relative path key parses, but `study` refuses it: a config error.
                let bad_path = match settings::Paths::resolve(&ctx.env, &l.config) {
                    Err(e @ settings::SettingsError::ConfigNotAbsolute { .. }) => Some(e),
                    _ => None,
                };
                if let Some(e) = bad_path {
                    checks.push(check(
                        "config",
                        "config",
                        Verdict::Fail,
                        format!("{}: {e}", path.display()),
                        Some("make that path absolute; `studyloop study` refuses to start until then"),
                        true,
                    ));
                } else if !l.exists {
                    checks.push(check(
                        "config",
                        "config",
                        Verdict::Warn,
                        format!("no config file at {}", path.display()),
                        Some("run `studyloop config init`"),
                        false,
                    ));
                } else if l.unknown_keys.is_empty() {
                    checks.push(check(
                        "config",
                        "config",
                        Verdict::Ok,
                        format!("{} parses", path.display()),
                        None,
                        false,
                    ));
                } else {
                    let keys = l.unknown_keys.join(", ");
                    checks.push(check(
                        "config",
                        "config",
                        Verdict::Warn,
                        format!("unknown top-level keys in {}: {keys}", path.display()),
                        Some("remove or fix them"),
                        false,
                    ));
                }
                Some(l)
            }
            Err(e) => {
                checks.push(check(
                    "config",
                    "config",
                    Verdict::Fail,
                    e.to_string(),
                    Some("fix the file or run `studyloop config init --force`"),
                    true,
                ));
                None
            }
        },
    };
    if let (Some(l), Ok(path)) = (&loaded, &config_file) {
        match scope::resolve(&ctx.env, &l.config, path, &ctx.cwd) {
            Ok(s) => checks.push(check(
                "scope",
                "config",
                Verdict::Ok,
                format!("{} (from {})", s.name.as_str(), s.source),
                None,
                false,
            )),
            Err(e) => checks.push(check(
                "scope",
                "config",
                Verdict::Fail,
                e.to_string(),
                Some("run `studyloop config init` or set memory.default_scope"),
                false,
            )),
        }
        match settings::Paths::resolve(&ctx.env, &l.config) {
            // Reported as the config check above.
            Err(settings::SettingsError::ConfigNotAbsolute { .. }) => {}
            Err(e) => checks.push(check(
                "paths",
                "core",
                Verdict::Fail,
                e.to_string(),
                Some("fix the path settings"),
                true,
            )),
            Ok(paths) => {
                checks.push(db_check(&paths.db));
                match state::StateStore::new(&paths.session).read() {
                    Ok(Some(s)) if s.is_active() => checks.push(check(
                        "session",
                        "session",
                        Verdict::Ok,
                        format!("active: {}", s.mux_session().unwrap_or("web")),
                        None,
                        false,
                    )),
                    Ok(_) => checks.push(check(
                        "session",
                        "session",
                        Verdict::Ok,
                        "no active session",
                        None,
                        false,
                    )),
                    Err(e) => checks.push(check(
                        "session",
                        "session",
                        Verdict::Fail,
                        e.to_string(),
                        Some(FIX),
                        false,
                    )),
                }
                // A journal whose op lock is held belongs to a start or end in progress.
                let interrupted = paths.session.journal().exists()
                    && crate::fsutil::FileLock::try_exclusive(&paths.session.op_lock())
                        .is_ok_and(|l| l.is_some());
                if interrupted {
                    // Not a failure: the next command (or --fix) finishes it.
                    checks.push(check(
                        "journal",
                        "session",
                        Verdict::Warn,
                        format!(
                            "{} records a start or end that did not finish; the next studyloop command repairs it",
                            paths.session.journal().display()
                        ),
                        Some(FIX),
                        false,
                    ));
                }
            }
        }
    }
    let (hc, harnesses) = harnesses::checks(ctx);
    checks.extend(hc);
    let (pc, prerequisites) = prerequisites::checks(ctx);
    checks.extend(pc);
    let exit_code = if checks.iter().any(|c| c.core && c.status == Verdict::Fail) {
        2
    } else if checks.iter().any(|c| c.status == Verdict::Fail) {
        1
    } else {
        0
    };
    Report {
        checks,
        harnesses,
        prerequisites,
        exit_code,
    }
}

fn db_check(path: &std::path::Path) -> Check {
    match store::Store::open_read_only(path).and_then(|s| s.map(|s| s.schema_version()).transpose())
    {
        Ok(None) => check(
            "database",
            "database",
            Verdict::Ok,
            format!(
                "{} not created yet (the first study session creates it)",
                path.display()
            ),
            None,
            false,
        ),
        Ok(Some(v)) if v > store::SCHEMA_VERSION => check(
            "database",
            "database",
            Verdict::Fail,
            format!(
                "{} has schema v{v}, newer than this studyloop (v{})",
                path.display(),
                store::SCHEMA_VERSION
            ),
            Some("upgrade studyloop"),
            true,
        ),
        Ok(Some(v)) if v < store::SCHEMA_VERSION => check(
            "database",
            "database",
            Verdict::Warn,
            format!(
                "{} at schema v{v}; the next session migrates it to v{}",
                path.display(),
                store::SCHEMA_VERSION
            ),
            None,
            false,
        ),
        Ok(Some(v)) => check(
            "database",
            "database",
            Verdict::Ok,
            format!("{} (schema v{v})", path.display()),
            None,
            false,
        ),
        Err(e) => check(
            "database",
            "database",
            Verdict::Fail,
            e.to_string(),
            Some("check the DB path and permissions"),
            true,
        ),
    }
}

/// The human-readable report.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    for c in &r.checks {
        let mark = match c.status {
            Verdict::Ok => "ok  ",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        let _ = writeln!(out, "[{mark}] {:<18} {}", c.name, c.detail);
        if let (Some(fix), false) = (&c.fix, c.status == Verdict::Ok) {
            let _ = writeln!(out, "       fix: {fix}");
        }
    }
    out
}
