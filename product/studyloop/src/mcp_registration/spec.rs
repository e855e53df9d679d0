//! The one description of the `studyloop-mcp` server a harness runs: the
//! absolute path of the installed binary and only the environment it needs
//! (where the config, state, database, live-session files and plans are, and
//! the session's scope). Harness configs and ACP `session/new` both render
//! this value; neither builds its own.
//!
//! Why pinned paths and scope instead of the caller's env: a harness starts
//! its MCP servers with an env of its own choosing (codex passes a short
//! allow-list, claude its whole env, opencode a merge), and from its own cwd.
//! Pinning every path and the scope makes the server act on the session's
//! state whatever the harness does, and nothing else reaches it: no
//! credential, no test hatch. `STUDYLOOP_CONFIG` is not passed: it is on the
//! child deny-list (`child_env`), like for the pane's own `studyloop` shim,
//! so the server reads the config under the pinned `HOME` as the shim does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::env;
use crate::scope::Scope;
use crate::settings::Paths;

/// The name every harness registers the server under.
pub const SERVER_NAME: &str = "studyloop";

/// The server binary's file name.
pub const MCP_BINARY: &str = "studyloop-mcp";

/// The server as a harness should run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// Always [`SERVER_NAME`].
    pub name: &'static str,
    /// Absolute path of the installed `studyloop-mcp`.
    pub command: PathBuf,
    /// Its arguments (none today; kept so every renderer writes the field).
    pub args: Vec<String>,
    /// Its whole environment, sorted by name.
    pub env: Vec<(String, String)>,
}

fn is_exec(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The installed `studyloop-mcp`: next to this executable first (an install
/// and `cargo build` put both binaries side by side), then on `PATH`.
#[must_use]
pub fn locate(ctx: &Ctx) -> Option<PathBuf> {
    ctx.exe
        .parent()
        .map(|d| d.join(MCP_BINARY))
        .filter(|p| p.is_absolute() && is_exec(p))
        .or_else(|| crate::procs::which(&ctx.env, MCP_BINARY))
}

/// The spec for a session with these resolved `paths` and `scope`, or
/// `None` when no `studyloop-mcp` is installed (the caller says so).
#[must_use]
pub fn spec(ctx: &Ctx, paths: &Paths, scope: &Scope) -> Option<McpServerSpec> {
    let command = locate(ctx)?;
    let plans = crate::settings::plans_dir(&ctx.env, &paths.state_dir).ok();
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut vars = vec![
        (env::HOME, path(&paths.home)),
        (env::STUDYLOOP_DB, path(&paths.db)),
        (env::STUDYLOOP_SESSION_DIR, path(&paths.session.dir)),
        (env::STUDYLOOP_STATE_DIR, path(&paths.state_dir)),
        (env::SESSION_CONTEXT_SCOPE, scope.name.as_str().to_owned()),
    ];
    if let Some(plans) = plans {
        vars.push((env::STUDYLOOP_PLANS_DIR, path(&plans)));
    }
    // The product's clock (`crate::clock`): topics logged through a tool carry
    // the same time as everything else the session writes.
    if let Ok(Some(now)) = ctx.env.get_nonempty(env::STUDYLOOP_NOW) {
        vars.push((env::STUDYLOOP_NOW, now.to_owned()));
    }
    let mut env: Vec<(String, String)> = vars.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    env.sort();
    Some(McpServerSpec {
        name: SERVER_NAME,
        command,
        args: Vec::new(),
        env,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::config::ScopeName;
    use crate::scope::ScopeSource;
    use crate::settings::SessionPaths;

    /// A root with `bin/studyloop-mcp`, a ctx whose exe is `bin/studyloop`,
    /// paths under `home/` and the `work` scope.
    pub(in crate::mcp_registration) fn fixture(
        root: &Path,
        caller: &[(&str, &str)],
    ) -> (Ctx, Paths, Scope) {
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let mcp = bin.join(MCP_BINARY);
        std::fs::write(&mcp, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&mcp, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ctx = Ctx {
            env: crate::env::Env::from_pairs(caller.iter().copied()),
            cwd: root.to_owned(),
            exe: bin.join("studyloop"),
        };
        let home = root.join("home");
        let paths = Paths {
            config_file: home.join(".config/studyloop/config.yaml"),
            session: SessionPaths {
                dir: home.join(".config/studyloop"),
            },
            state_dir: home.join(".local/share/studyloop"),
            db: home.join(".config/studyloop/sessions.db"),
            home,
        };
        let scope = Scope {
            name: ScopeName::Work,
            source: ScopeSource::Default,
        };
        (ctx, paths, scope)
    }

    #[test]
    fn the_spec_is_the_sibling_binary_with_pinned_paths_and_no_credential() {
        let root = tempfile::tempdir().unwrap();
        let (ctx, paths, scope) = fixture(
            root.path(),
            &[
                ("OPENAI_API_KEY", "sk-secret"),
                ("ANTHROPIC_API_KEY", "sk-ant"),
                ("STUDYLOOP_TEST_AGENT_CMD", "evil"),
                ("PATH", "/usr/bin"),
            ],
        );
        let s = spec(&ctx, &paths, &scope).unwrap();
        assert_eq!(s.name, "studyloop");
        assert_eq!(s.command, root.path().join("bin/studyloop-mcp"));
        let keys: Vec<&str> = s.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "HOME",
                "SESSION_CONTEXT_SCOPE",
                "STUDYLOOP_DB",
                "STUDYLOOP_PLANS_DIR",
                "STUDYLOOP_SESSION_DIR",
                "STUDYLOOP_STATE_DIR",
            ]
        );
        let get = |k: &str| s.env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("SESSION_CONTEXT_SCOPE"), Some("work"));
        assert_eq!(
            get("STUDYLOOP_PLANS_DIR").map(PathBuf::from),
            Some(paths.state_dir.join("study-plans"))
        );
        assert!(s.env.iter().all(|(_, v)| !v.contains("sk-")));
        assert!(s.env.iter().all(|(k, _)| !crate::child_env::is_denied(k)));
    }

    #[test]
    fn the_products_clock_reaches_the_server() {
        let root = tempfile::tempdir().unwrap();
        let (ctx, paths, scope) =
            fixture(root.path(), &[("STUDYLOOP_NOW", "2026-12-01T09:00:00Z")]);
        let s = spec(&ctx, &paths, &scope).unwrap();
        let now = s.env.iter().find(|(k, _)| k == "STUDYLOOP_NOW");
        assert_eq!(now.map(|(_, v)| v.as_str()), Some("2026-12-01T09:00:00Z"));
    }

    #[test]
    fn no_installed_server_is_none_and_path_is_the_fallback() {
        let root = tempfile::tempdir().unwrap();
        let (mut ctx, paths, scope) = fixture(root.path(), &[]);
        ctx.exe = root.path().join("elsewhere/studyloop");
        assert_eq!(spec(&ctx, &paths, &scope), None);
        ctx.env = crate::env::Env::from_pairs([("PATH", root.path().join("bin"))]);
        assert_eq!(
            spec(&ctx, &paths, &scope).unwrap().command,
            root.path().join("bin/studyloop-mcp")
        );
    }
}
