//! `prepare` and `teardown`: put the persona where the chosen harness reads
//! it and run that harness's hooks (trust writes, Kiro agent JSON). The
//! canonical persona file itself is written by the session code beforehand.

use std::path::Path;

use super::{AdapterError, Harness, Placement, io_err as io, kiro, trust};
use crate::env::Env;

/// What `prepare` needs.
#[derive(Debug, Clone, Copy)]
pub struct PrepareInput<'a> {
    /// The harness.
    pub harness: Harness,
    /// The environment of the launch.
    pub env: &'a Env,
    /// The home directory.
    pub home: &'a Path,
    /// The session working directory (exists).
    pub session_dir: &'a Path,
    /// The canonical persona file (exists).
    pub persona_file: &'a Path,
    /// Its text.
    pub persona_text: &'a str,
    /// Unix time for trust records.
    pub now_epoch: i64,
}

/// What `prepare` did, for the caller's log and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Files written or changed outside the persona file.
    pub written: Vec<std::path::PathBuf>,
}

fn write_private(path: &Path, text: &str) -> Result<(), AdapterError> {
    if let Some(dir) = path.parent() {
        crate::fsutil::ensure_private_dir(dir).map_err(io("create", dir))?;
    }
    crate::fsutil::atomic_write(path, text.as_bytes(), 0o600).map_err(io("write", path))
}

/// Check what can be checked before anything is written (Kiro's template).
pub fn preflight(harness: Harness, env: &Env) -> Result<(), AdapterError> {
    if harness == Harness::Kiro {
        kiro::check_template(env)?;
    }
    Ok(())
}

/// The opencode agent file: frontmatter then the persona.
fn opencode_agent(persona: &str) -> String {
    format!(
        "---\ndescription: StudyLoop study mentor\nmode: primary\ntemperature: 0.3\npermission:\n  edit: allow\n  bash:\n    \"studyloop *\": allow\n    \"session-* *\": allow\n    \"*\": ask\n---\n{persona}"
    )
}

/// Place the persona and run the harness hooks.
pub fn prepare(input: &PrepareInput<'_>) -> Result<Prepared, AdapterError> {
    let mut out = Prepared::default();
    let dir = input.session_dir;
    match input.harness.adapter().placement {
        Placement::AgentsMd => {
            let p = dir.join("AGENTS.md");
            write_private(&p, input.persona_text)?;
            out.written.push(p);
        }
        Placement::CommandLine => {}
        Placement::KiroAgentJson => {
            kiro::install(input.env, input.home, input.persona_file)?;
            out.written.push(
                super::kiro_agents_dir(input.env, input.home)?
                    .join(format!("{}.json", kiro::KIRO_AGENT_NAME)),
            );
        }
        Placement::OpencodeAgent => {
            let p = dir.join(".opencode").join("agents").join("study-mentor.md");
            write_private(&p, &opencode_agent(input.persona_text))?;
            out.written.push(p);
        }
        Placement::GrokMd => {
            let p = dir.join(".grok").join("GROK.md");
            write_private(&p, input.persona_text)?;
            out.written.push(p);
        }
    }
    let parent = dir.parent().unwrap_or(dir);
    let trusted = [parent, dir];
    let trust_file = match input.harness {
        Harness::Claude if trust::claude(input.env, input.home, &trusted)? => {
            Some(trust::claude_config_file(input.env, input.home)?)
        }
        Harness::Grok if trust::grok(input.env, input.home, &trusted, input.now_epoch)? => {
            Some(trust::grok_home(input.env, input.home)?.join("trusted_folders.toml"))
        }
        _ => None,
    };
    out.written.extend(trust_file);
    Ok(out)
}

/// Undo what `prepare` put outside the session dir (only Kiro's agent JSON).
pub fn teardown(
    harness: Harness,
    env: &Env,
    home: &Path,
    persona_file: &Path,
) -> Result<(), AdapterError> {
    if harness == Harness::Kiro {
        kiro::uninstall(env, home, persona_file)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::HARNESS_ORDER;
    use std::fs;

    #[test]
    fn each_harness_gets_its_persona_where_it_reads_it() {
        for h in HARNESS_ORDER {
            let root = tempfile::tempdir().unwrap();
            let home = root.path().join("home");
            let dir = root.path().join("sessions/study-x-1");
            fs::create_dir_all(&dir).unwrap();
            fs::create_dir_all(&home).unwrap();
            fs::write(home.join(".claude.json"), "{}").unwrap();
            let persona = dir.join("persona.md");
            fs::write(&persona, "<!-- PERSONA=studyloop-study -->\nhello").unwrap();
            let env = Env::default();
            let input = PrepareInput {
                harness: h,
                env: &env,
                home: &home,
                session_dir: &dir,
                persona_file: &persona,
                persona_text: "<!-- PERSONA=studyloop-study -->\nhello",
                now_epoch: 0,
            };
            let prepared = prepare(&input).unwrap();
            let expect_file = match h {
                Harness::Codex | Harness::Pi => Some(dir.join("AGENTS.md")),
                Harness::Opencode => Some(dir.join(".opencode/agents/study-mentor.md")),
                Harness::Grok => Some(dir.join(".grok/GROK.md")),
                Harness::Kiro => Some(home.join(".kiro/agents/study-mentor.json")),
                Harness::Claude => None,
            };
            if let Some(f) = expect_file {
                let text = fs::read_to_string(&f).unwrap();
                assert!(
                    text.contains("PERSONA=studyloop-study") || text.contains("file://"),
                    "{h:?}: {text}"
                );
            }
            let claude_json = fs::read_to_string(home.join(".claude.json")).unwrap();
            assert_eq!(
                claude_json.contains("hasTrustDialogAccepted"),
                h == Harness::Claude,
                "{h:?} trust write"
            );
            assert_eq!(
                prepared.written.iter().any(|p| p.ends_with(".claude.json")),
                h == Harness::Claude
            );
            teardown(h, &env, &home, &persona).unwrap();
            assert!(!home.join(".kiro/agents/study-mentor.json").exists());
        }
    }

    #[test]
    fn opencode_frontmatter() {
        let a = opencode_agent("P");
        assert!(
            a.starts_with("---\ndescription:")
                && a.contains("mode: primary")
                && a.contains("temperature: 0.3")
                && a.ends_with("---\nP")
        );
    }
}
