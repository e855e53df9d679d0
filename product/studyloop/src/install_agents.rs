//! `studyloop install agents [--tool H]`: register `studyloop-mcp` in the
//! harness homes (every harness whose binary is on `PATH`, or the one named),
//! then print the nine plan tools. Idempotent: a re-run changes no file.

use std::fmt::Write as _;

use crate::adapters::{HARNESS_ORDER, Harness};
use crate::context::Ctx;
use crate::mcp_registration::{Registered, Target, register};
use crate::session::{self, SessionError};

/// The report, and whether every harness went through.
///
/// # Errors
/// The scope gate or config problems ([`SessionError`]); a bad `--tool`.
pub fn install_agents(ctx: &Ctx, tool: Option<&str>) -> Result<(String, bool), SessionError> {
    let harnesses: Vec<Harness> = match tool {
        Some(name) => vec![Harness::parse(name)?],
        None => HARNESS_ORDER
            .into_iter()
            .filter(|h| h.adapter().resolve_binary(&ctx.env).is_some())
            .collect(),
    };
    let loaded = session::load(ctx)?;
    let Some(spec) = crate::mcp_registration::spec(ctx, &loaded.paths, &loaded.scope) else {
        let msg = format!(
            "studyloop-mcp is not installed next to {} or on PATH; install both binaries together, then re-run\n",
            ctx.exe.display()
        );
        return Ok((msg, false));
    };
    let t = Target {
        env: &ctx.env,
        home: &loaded.paths.home,
        session_dir: None,
    };
    let mut out = String::new();
    let mut ok = true;
    if harnesses.is_empty() {
        out.push_str("no harness found on PATH (codex, claude, kiro, pi, opencode, grok); pass --tool NAME\n");
    }
    for h in harnesses {
        let line = match register(h, &spec, &t) {
            Ok(o) => {
                let what = match o.registered {
                    Registered::Written(p) => format!("registered `studyloop` in {}", p.display()),
                    Registered::Unchanged(p) => format!("already registered in {}", p.display()),
                    Registered::Unsupported(why) => format!("not registered: {why}"),
                };
                match o.warning {
                    Some(w) => format!("{what} ({w})"),
                    None => what,
                }
            }
            Err(e) => {
                ok = false;
                e.to_string()
            }
        };
        let _ = writeln!(out, "{}: {line}", h.as_str());
    }
    let _ = writeln!(
        out,
        "studyloop-mcp: {}\nplan tools: {}",
        spec.command.display(),
        crate::plans::PLAN_TOOL_NAMES.join(", ")
    );
    Ok((out, ok))
}
