//! The scope gate: which memory scope this process may read and write. Order:
//! `SESSION_CONTEXT_SCOPE`, then the configured project whose roots contain
//! the cwd, then `memory.default_scope`. With none, DB-touching commands
//! refuse to run (exit 2) and nothing is launched. The scope is never
//! inferred from a harness.

use std::path::Path;

use crate::config::{Config, ScopeName};
use crate::env::{self, Env, EnvError};

/// Where the scope came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeSource {
    /// `SESSION_CONTEXT_SCOPE`.
    EnvOverride,
    /// A project root containing the cwd.
    Project(String),
    /// `memory.default_scope`.
    Default,
}

impl std::fmt::Display for ScopeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EnvOverride => f.write_str("SESSION_CONTEXT_SCOPE"),
            Self::Project(id) => write!(f, "project `{id}`"),
            Self::Default => f.write_str("memory.default_scope"),
        }
    }
}

/// A resolved scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The scope.
    pub name: ScopeName,
    /// How it was chosen.
    pub source: ScopeSource,
}

/// The fix a `scope_unconfigured` failure names in `details.fix`
/// ([`crate::plans::PlanError::failure`], the same through the CLI, web and MCP doors).
pub const UNCONFIGURED_FIX: &str = "set `memory.default_scope` in config.yaml (`studyloop config init` writes one) or export SESSION_CONTEXT_SCOPE";

/// Why no scope is available.
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    /// None of the three sources gives a scope.
    #[error(
        "No context scope configured: set `memory.default_scope` ({accepted}) or a project under `memory.projects` in {config}, \
         or export SESSION_CONTEXT_SCOPE; `studyloop config init` writes a config with `memory.default_scope: unclassified`. \
         The scope is never inferred from a harness.",
        accepted = ScopeName::ACCEPTED
    )]
    Unconfigured {
        /// The config file that was consulted.
        config: String,
    },
    /// `SESSION_CONTEXT_SCOPE` holds an unknown value.
    #[error(transparent)]
    BadEnv(#[from] EnvError),
}

/// Resolve the scope for a process whose working directory is `cwd`.
pub fn resolve(
    env: &Env,
    config: &Config,
    config_path: &Path,
    cwd: &Path,
) -> Result<Scope, ScopeError> {
    if let Some(raw) = env.get_nonempty(env::SESSION_CONTEXT_SCOPE)? {
        let name = ScopeName::parse(raw).ok_or_else(|| EnvError::Invalid {
            name: env::SESSION_CONTEXT_SCOPE,
            value: raw.to_owned(),
            accepted: ScopeName::ACCEPTED,
        })?;
        return Ok(Scope {
            name,
            source: ScopeSource::EnvOverride,
        });
    }
    // The most specific (longest) matching root wins, so a nested project beats its parent.
    let best = config
        .memory
        .projects
        .iter()
        .flat_map(|(id, p)| p.roots.iter().map(move |r| (id, p, r)))
        .filter(|(_, _, root)| root.is_absolute() && cwd.starts_with(root))
        .max_by_key(|(_, _, root)| root.components().count());
    if let Some((id, project, _)) = best {
        return Ok(Scope {
            name: project.scope,
            source: ScopeSource::Project(id.clone()),
        });
    }
    match config.memory.default_scope {
        Some(name) => Ok(Scope {
            name,
            source: ScopeSource::Default,
        }),
        None => Err(ScopeError::Unconfigured {
            config: config_path.display().to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use std::path::PathBuf;

    fn cfg(text: &str) -> Config {
        parse(Path::new("/c.yaml"), text).unwrap().0
    }

    #[test]
    fn no_scope_is_the_gate() {
        let err = resolve(
            &Env::default(),
            &Config::default(),
            Path::new("/c.yaml"),
            Path::new("/"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("No context scope configured") && msg.contains("memory.default_scope"),
            "{msg}"
        );
    }

    #[test]
    fn order_env_then_project_then_default() {
        let c = cfg(
            "memory:\n  default_scope: personal\n  projects:\n    p: {scope: work, roots: [/w]}\n    q: {scope: unclassified, roots: [/w/inner]}\n",
        );
        let cwd = PathBuf::from("/w/inner/x");
        let s = resolve(&Env::default(), &c, Path::new("/c"), &cwd).unwrap();
        assert_eq!(
            (s.name, s.source),
            (ScopeName::Unclassified, ScopeSource::Project("q".into()))
        );
        let s = resolve(&Env::default(), &c, Path::new("/c"), Path::new("/w/a")).unwrap();
        assert_eq!(s.name, ScopeName::Work);
        let s = resolve(
            &Env::default(),
            &c,
            Path::new("/c"),
            Path::new("/elsewhere"),
        )
        .unwrap();
        assert_eq!(
            (s.name, s.source),
            (ScopeName::Personal, ScopeSource::Default)
        );
        let e = Env::from_pairs([("SESSION_CONTEXT_SCOPE", "work")]);
        assert_eq!(
            resolve(&e, &c, Path::new("/c"), &cwd).unwrap().source,
            ScopeSource::EnvOverride
        );
        let e = Env::from_pairs([("SESSION_CONTEXT_SCOPE", "home")]);
        assert!(
            resolve(&e, &c, Path::new("/c"), &cwd)
                .unwrap_err()
                .to_string()
                .contains("`home`")
        );
    }
}
