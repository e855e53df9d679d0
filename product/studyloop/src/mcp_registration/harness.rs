//! Writing the server into each harness's own config (pinned versions):
//!
//! | harness | file | entry |
//! |---|---|---|
//! | codex 0.171 | `$CODEX_HOME/config.toml` (default `~/.codex`) | `[mcp_servers.studyloop]` `command`, `args`, `[…env]` |
//! | claude 2.1.332 | `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`), user scope | `mcpServers.studyloop` `{type: stdio, command, args, env}` |
//! | opencode 1.18.33 | `$XDG_CONFIG_HOME/opencode/opencode.json` (default `~/.config`) | `mcp.studyloop` `{type: local, command: [..], environment, enabled: true}` |
//! | kiro | the session's agent JSON (`study-mentor.json`, restored at the end) | `mcpServers.studyloop` `{command, args, env}` |
//! | grok 0.0.34 | `<session dir>/.grok/settings.json` (grok reads MCP servers only from the cwd's project settings) | `mcpServers.studyloop` `{name, transport: {type: stdio, command, args, env}}` |
//! | pi 0.73.1 | none: pi has no MCP client ("No MCP" in its README) | — |
//!
//! For claude the session dir's `.claude/settings.local.json` also allows
//! `mcp__studyloop` (Claude Code otherwise asks before each MCP call).
//!
//! The name `studyloop` belongs to StudyLoop (reference §7): an entry under
//! it that runs something else is replaced, and a warning names the file and
//! the command it ran before. Every other entry and key is kept, and a
//! re-run with the same spec leaves the file byte for byte unchanged.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::files::{confined, json_object, pretty, read, write};
use super::{McpServerSpec, RegistrationError, codex_toml};
use crate::adapters::Harness;
use crate::env::{self, Env};

/// Why pi cannot take the server.
pub const PI_NO_MCP: &str = "pi 0.73.1 has no MCP client (its README: \"No MCP\"); the agent reaches StudyLoop through the session dir's `studyloop` command instead";

/// Where registration may write.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The environment (harness dir overrides).
    pub env: &'a Env,
    /// The home directory.
    pub home: &'a Path,
    /// The session dir, for harnesses whose MCP config is per project.
    pub session_dir: Option<&'a Path>,
}

/// What registration did for one harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// The file now holds the entry (it changed).
    Written(PathBuf),
    /// The file already held exactly this entry.
    Unchanged(PathBuf),
    /// The harness cannot take an MCP server here; the reason.
    Unsupported(&'static str),
}

/// The outcome plus a warning when an entry pointing elsewhere was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// What happened.
    pub registered: Registered,
    /// For the user.
    pub warning: Option<String>,
}

fn env_dir(env: &Env, name: &'static str) -> Result<Option<PathBuf>, RegistrationError> {
    Ok(env
        .get_nonempty(name)?
        .map(PathBuf::from)
        .filter(|p| p.is_absolute()))
}

fn env_object(spec: &McpServerSpec) -> Value {
    Value::Object(
        spec.env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// A JSON harness's entry: the file, the tree it must stay in, the
/// `[table, name]` path of the entry, and the entry.
type JsonPlan = (PathBuf, PathBuf, [&'static str; 2], Value);

/// The [`JsonPlan`] of a JSON harness (`None` for codex, pi, and grok
/// without a session dir).
fn json_plan(
    harness: Harness,
    spec: &McpServerSpec,
    t: &Target<'_>,
) -> Result<Option<JsonPlan>, RegistrationError> {
    let cmd = spec.command.to_string_lossy().into_owned();
    Ok(Some(match harness {
        Harness::Claude => {
            let root = env_dir(t.env, env::CLAUDE_CONFIG_DIR)?.unwrap_or_else(|| t.home.to_owned());
            let file = crate::adapters::claude_config_file(t.env, t.home)?;
            let entry = json!({"type": "stdio", "command": cmd, "args": spec.args, "env": env_object(spec)});
            (file, root, ["mcpServers", spec.name], entry)
        }
        Harness::Opencode => {
            let root =
                env_dir(t.env, env::XDG_CONFIG_HOME)?.unwrap_or_else(|| t.home.join(".config"));
            let file = root.join("opencode").join("opencode.json");
            let mut command = vec![cmd];
            command.extend(spec.args.iter().cloned());
            let entry = json!({"type": "local", "command": command, "environment": env_object(spec), "enabled": true});
            (file, root, ["mcp", spec.name], entry)
        }
        Harness::Kiro => {
            let dir = crate::adapters::kiro_agents_dir(t.env, t.home)?;
            let file = dir.join(format!("{}.json", crate::adapters::KIRO_AGENT_NAME));
            let entry = json!({"command": cmd, "args": spec.args, "env": env_object(spec)});
            (file, dir, ["mcpServers", spec.name], entry)
        }
        Harness::Grok => {
            let Some(dir) = t.session_dir else {
                return Ok(None);
            };
            let file = dir.join(".grok").join("settings.json");
            let entry = json!({"name": spec.name, "transport": {"type": "stdio", "command": cmd,
                "args": spec.args, "env": env_object(spec)}});
            (file, dir.to_owned(), ["mcpServers", spec.name], entry)
        }
        Harness::Codex | Harness::Pi => return Ok(None),
    }))
}

fn previous_warning(file: &Path, previous: Option<String>, ours: &str) -> Option<String> {
    previous.filter(|p| p != ours).map(|p| {
        format!(
            "replaced the `studyloop` MCP entry in {} (it ran {p}) with {ours}",
            file.display()
        )
    })
}

fn done(file: PathBuf, changed: bool, warning: Option<String>) -> Outcome {
    Outcome {
        registered: if changed {
            Registered::Written(file)
        } else {
            Registered::Unchanged(file)
        },
        warning,
    }
}

/// Register `spec` in `harness`'s config.
///
/// # Errors
/// [`RegistrationError`]: a file outside its root (symlink), not parseable, or unwritable.
pub fn register(
    harness: Harness,
    spec: &McpServerSpec,
    t: &Target<'_>,
) -> Result<Outcome, RegistrationError> {
    let ours = spec.command.to_string_lossy().into_owned();
    if harness == Harness::Pi {
        return Ok(Outcome {
            registered: Registered::Unsupported(PI_NO_MCP),
            warning: None,
        });
    }
    if harness == Harness::Codex {
        let root = env_dir(t.env, env::CODEX_HOME)?.unwrap_or_else(|| t.home.join(".codex"));
        let target = confined(&root.join("config.toml"), &root)?;
        let text = read(&target)?.unwrap_or_default();
        let (new, previous) =
            codex_toml::upsert(&text, spec).map_err(|reason| RegistrationError::BadToml {
                path: target.clone(),
                reason,
            })?;
        let changed = new != text;
        if changed {
            write(&target, &new)?;
        }
        let warning = previous_warning(&target, previous, &ours);
        return Ok(done(target, changed, warning));
    }
    let Some((file, root, [table, name], entry)) = json_plan(harness, spec, t)? else {
        return Ok(Outcome {
            registered: Registered::Unsupported(
                "grok 0.0.34 reads MCP servers only from a project's `.grok/settings.json`; `studyloop study` writes it into each session dir",
            ),
            warning: None,
        });
    };
    let target = confined(&file, &root)?;
    let text = read(&target)?;
    let mut root_obj = json_object(&target, text.as_deref())?;
    let servers = root_obj.entry(table).or_insert_with(|| json!({}));
    let Some(servers) = servers.as_object_mut() else {
        return Err(RegistrationError::Unparsable(target));
    };
    let previous = servers.get(name).map(|old| {
        old.get("command")
            .or_else(|| old.pointer("/transport/command"))
            .map_or_else(
                || old.to_string(),
                |c| c.to_string().trim_matches('"').to_owned(),
            )
    });
    let changed = servers.get(name) != Some(&entry);
    servers.insert(name.to_owned(), entry);
    if changed {
        write(&target, &pretty(&Value::Object(root_obj)))?;
    }
    let previous = previous.filter(|p| !p.contains(&ours));
    Ok(done(
        target.clone(),
        changed,
        previous_warning(&target, previous, &ours),
    ))
}

/// Register for a session of `harness` started from the CLI; every problem
/// is a warning for the user, never a reason not to start (the agent then
/// lacks the tools but the session works).
#[must_use]
pub fn register_for_session(
    ctx: &crate::context::Ctx,
    paths: &crate::settings::Paths,
    scope: &crate::scope::Scope,
    harness: Harness,
    session_dir: &Path,
) -> Vec<String> {
    if harness == Harness::Pi {
        return Vec::new();
    }
    let Some(spec) = super::spec(ctx, paths, scope) else {
        return vec![format!(
            "studyloop-mcp is not installed next to {} or on PATH: the agent runs without the studyloop tools (install both binaries together)",
            ctx.exe.display()
        )];
    };
    let t = Target {
        env: &ctx.env,
        home: &paths.home,
        session_dir: Some(session_dir),
    };
    let mut warnings: Vec<String> = match register(harness, &spec, &t) {
        Ok(o) => o.warning.into_iter().collect(),
        Err(e) => vec![e.to_string()],
    };
    if harness == Harness::Claude
        && let Err(e) = claude_allow(session_dir, spec.name)
    {
        warnings.push(e.to_string());
    }
    warnings
}

/// Claude Code asks before every MCP tool call unless allowed: the session
/// dir's `.claude/settings.local.json` (project-local, ours) allows the
/// `studyloop` server's tools (`mcp__studyloop`), and nothing else.
fn claude_allow(session_dir: &Path, server: &str) -> Result<(), RegistrationError> {
    let file = session_dir.join(".claude").join("settings.local.json");
    let target = confined(&file, session_dir)?;
    let text = read(&target)?;
    let mut root = json_object(&target, text.as_deref())?;
    let rule = format!("mcp__{server}");
    let permissions = root.entry("permissions").or_insert_with(|| json!({}));
    let Some(allow) = permissions
        .as_object_mut()
        .map(|p| p.entry("allow").or_insert_with(|| json!([])))
        .and_then(Value::as_array_mut)
    else {
        return Err(RegistrationError::Unparsable(target));
    };
    if allow.iter().any(|r| r.as_str() == Some(rule.as_str())) {
        return Ok(());
    }
    allow.push(Value::String(rule));
    write(&target, &pretty(&Value::Object(root)))
}
