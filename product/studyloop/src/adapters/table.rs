//! The adapter table: one row per harness (binary, fresh and resume arguments, persona placement) and harness detection.

use super::KIRO_AGENT_NAME;
use std::path::{Path, PathBuf};

use crate::env::{self, Env};

use super::error::AdapterError;

/// A release harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Harness {
    /// OpenAI Codex CLI.
    Codex,
    /// Claude Code.
    Claude,
    /// Kiro CLI.
    Kiro,
    /// pi coding agent.
    Pi,
    /// OpenCode.
    Opencode,
    /// Grok CLI.
    Grok,
}

/// The six, in the workspace's canonical order (docs/runner.md#selection-acceptanceselection).
pub const HARNESS_ORDER: [Harness; 6] = [
    Harness::Codex,
    Harness::Claude,
    Harness::Kiro,
    Harness::Pi,
    Harness::Opencode,
    Harness::Grok,
];

impl Harness {
    /// Parse a harness name (exact, lowercase).
    pub fn parse(s: &str) -> Result<Self, AdapterError> {
        HARNESS_ORDER
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| AdapterError::Unknown(s.to_owned()))
    }

    /// The harness name.
    pub fn as_str(self) -> &'static str {
        self.adapter().name
    }

    /// Its adapter row.
    pub fn adapter(self) -> &'static Adapter {
        &ADAPTERS[self as usize]
    }
}

/// One argument of a launch command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A literal argument.
    Lit(&'static str),
    /// The persona text itself, read from the persona file at launch.
    PersonaText,
}

/// Where the persona is put for a harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// `<session dir>/AGENTS.md` (codex, pi).
    AgentsMd,
    /// Passed on the command line (claude `--append-system-prompt`).
    CommandLine,
    /// `<KIRO_AGENTS_DIR>/study-mentor.json` with `"prompt": "file://<persona>"`.
    KiroAgentJson,
    /// `<session dir>/.opencode/agents/study-mentor.md` (frontmatter + persona).
    OpencodeAgent,
    /// `<session dir>/.grok/GROK.md`.
    GrokMd,
}

/// One adapter row.
#[derive(Debug)]
pub struct Adapter {
    /// Harness.
    pub harness: Harness,
    /// Name used by `--agent`.
    pub name: &'static str,
    /// Human label.
    pub label: &'static str,
    /// Binary names tried in order on PATH.
    pub binaries: &'static [&'static str],
    /// Arguments for a fresh start.
    pub fresh: &'static [Arg],
    /// Arguments for `study --resume`.
    pub resume: &'static [Arg],
    /// Where the persona goes.
    pub placement: Placement,
    /// Where the resume row differs from the reference, and why.
    pub deviation: Option<&'static str>,
}

use Arg::{Lit, PersonaText};

/// The adapter table (cwd of every launch = the session dir).
pub const ADAPTERS: [Adapter; 6] = [
    Adapter {
        harness: Harness::Codex,
        name: "codex",
        label: "Codex",
        binaries: &["codex"],
        fresh: &[],
        resume: &[Lit("resume"), Lit("--last")],
        placement: Placement::AgentsMd,
        deviation: Some(
            "reference resume `codex --resume` is rejected by codex 0.171; the real CLI resumes with `codex resume --last`",
        ),
    },
    Adapter {
        harness: Harness::Claude,
        name: "claude",
        label: "Claude Code",
        binaries: &["claude"],
        fresh: &[Lit("--append-system-prompt"), PersonaText],
        resume: &[
            Lit("--continue"),
            Lit("--append-system-prompt"),
            PersonaText,
        ],
        placement: Placement::CommandLine,
        deviation: Some(
            "reference uses `--append-system-prompt-file <file>` and `-r` (an interactive picker); the lab-verified interactive form is \
             `--append-system-prompt <text>` and `--continue` resumes the latest conversation of the dir",
        ),
    },
    Adapter {
        harness: Harness::Kiro,
        name: "kiro",
        label: "Kiro CLI",
        binaries: &["kiro-cli", "kiro"],
        fresh: &[Lit("chat"), Lit("--agent"), Lit(KIRO_AGENT_NAME)],
        resume: &[
            Lit("chat"),
            Lit("--agent"),
            Lit(KIRO_AGENT_NAME),
            Lit("--resume"),
        ],
        placement: Placement::KiroAgentJson,
        deviation: None,
    },
    Adapter {
        harness: Harness::Pi,
        name: "pi",
        label: "pi",
        binaries: &["pi"],
        fresh: &[Lit("--no-extensions")],
        resume: &[Lit("--no-extensions"), Lit("--continue")],
        placement: Placement::AgentsMd,
        deviation: None,
    },
    Adapter {
        harness: Harness::Opencode,
        name: "opencode",
        label: "OpenCode",
        binaries: &["opencode"],
        fresh: &[Lit("--agent"), Lit("study-mentor")],
        resume: &[Lit("--agent"), Lit("study-mentor"), Lit("--continue")],
        placement: Placement::OpencodeAgent,
        deviation: None,
    },
    Adapter {
        harness: Harness::Grok,
        name: "grok",
        label: "Grok Build",
        binaries: &["grok"],
        fresh: &[],
        resume: &[],
        placement: Placement::GrokMd,
        deviation: Some(
            "grok 0.0.34 has no sessions and no `--resume` (the reference's resume argv would be refused), so resume relaunches fresh; \
             it reads its persona from `.grok/GROK.md`, not AGENTS.md",
        ),
    },
];

impl Adapter {
    /// The binary on the PATH of `env`, as an absolute path.
    pub fn resolve_binary(&self, env: &Env) -> Option<PathBuf> {
        self.binaries
            .iter()
            .find_map(|b| crate::procs::which(env, b))
    }

    /// Like [`Self::resolve_binary`], but an error naming the binary.
    pub fn require_binary(&self, env: &Env) -> Result<PathBuf, AdapterError> {
        self.resolve_binary(env).ok_or(AdapterError::BinaryMissing {
            label: self.label,
            binary: self.binaries[0],
        })
    }

    /// The shell command that launches the harness: `binary` then the fresh
    /// or resume arguments, each shell-quoted; the persona text is read from
    /// `persona_file` at launch (`"$(cat …)"`) so it never sits in our argv.
    pub fn shell_command(&self, binary: &Path, persona_file: &Path, resume: bool) -> String {
        let args = if resume { self.resume } else { self.fresh };
        let mut cmd = crate::shell::quote(&binary.to_string_lossy());
        for a in args {
            cmd.push(' ');
            match a {
                Lit(s) => cmd.push_str(&crate::shell::quote(s)),
                PersonaText => {
                    cmd.push_str("\"$(cat ");
                    cmd.push_str(&crate::shell::quote(&persona_file.to_string_lossy()));
                    cmd.push_str(")\"");
                }
            }
        }
        cmd
    }
}

/// Pick the harness when `--agent` is absent: `STUDYLOOP_AGENT` (the only
/// candidate when set), then config `agents.priority`, then table order; only
/// harnesses whose binary is on PATH count.
pub fn detect(env: &Env, priority: &[String]) -> Result<Harness, AdapterError> {
    if let Some(name) = env.get_nonempty(env::STUDYLOOP_AGENT)? {
        let h = Harness::parse(name)?;
        return match h.adapter().resolve_binary(env) {
            Some(_) => Ok(h),
            None => Err(AdapterError::NoneDetected(format!(
                "STUDYLOOP_AGENT={name} but `{}` is not on PATH",
                h.adapter().binaries[0]
            ))),
        };
    }
    let from_config = priority.iter().filter_map(|p| Harness::parse(p).ok());
    from_config
        .chain(HARNESS_ORDER)
        .find(|h| h.adapter().resolve_binary(env).is_some())
        .ok_or_else(|| {
            AdapterError::NoneDetected(
                "none of codex, claude, kiro, pi, opencode, grok is on PATH".into(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_harness() {
        for h in HARNESS_ORDER {
            assert_eq!(h.adapter().harness, h);
            assert_eq!(Harness::parse(h.as_str()).unwrap(), h);
        }
        let err = Harness::parse("oclode").unwrap_err().to_string();
        assert!(
            err.contains("`oclode`") && err.contains("codex, claude, kiro, pi, opencode, grok"),
            "{err}"
        );
    }

    #[test]
    fn exact_argv_per_harness() {
        let bin = Path::new("/bin/x");
        let pf = Path::new("/s/persona.md");
        let cases = [
            (Harness::Codex, "'/bin/x'", "'/bin/x' 'resume' '--last'"),
            (
                Harness::Claude,
                "'/bin/x' '--append-system-prompt' \"$(cat '/s/persona.md')\"",
                "'/bin/x' '--continue' '--append-system-prompt' \"$(cat '/s/persona.md')\"",
            ),
            (
                Harness::Kiro,
                "'/bin/x' 'chat' '--agent' 'study-mentor'",
                "'/bin/x' 'chat' '--agent' 'study-mentor' '--resume'",
            ),
            (
                Harness::Pi,
                "'/bin/x' '--no-extensions'",
                "'/bin/x' '--no-extensions' '--continue'",
            ),
            (
                Harness::Opencode,
                "'/bin/x' '--agent' 'study-mentor'",
                "'/bin/x' '--agent' 'study-mentor' '--continue'",
            ),
            (Harness::Grok, "'/bin/x'", "'/bin/x'"),
        ];
        for (h, fresh, resume) in cases {
            assert_eq!(
                h.adapter().shell_command(bin, pf, false),
                fresh,
                "{h:?} fresh"
            );
            assert_eq!(
                h.adapter().shell_command(bin, pf, true),
                resume,
                "{h:?} resume"
            );
        }
    }

    #[test]
    fn detection_order_and_override() {
        let dir = tempfile::tempdir().unwrap();
        for b in ["pi", "grok"] {
            let p = dir.path().join(b);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let path = dir.path().to_string_lossy().into_owned();
        let env = Env::from_pairs([("PATH", path.as_str())]);
        assert_eq!(detect(&env, &[]).unwrap(), Harness::Pi);
        assert_eq!(
            detect(&env, &["grok".into(), "pi".into()]).unwrap(),
            Harness::Grok
        );
        let env2 = Env::from_pairs([("PATH", path.as_str()), ("STUDYLOOP_AGENT", "codex")]);
        assert!(
            detect(&env2, &[])
                .unwrap_err()
                .to_string()
                .contains("STUDYLOOP_AGENT=codex")
        );
        assert!(
            detect(&Env::default(), &[])
                .unwrap_err()
                .to_string()
                .starts_with("No AI agent found")
        );
    }
}
