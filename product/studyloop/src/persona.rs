//! The canonical mentor persona (reference §2.3), the same text for every
//! harness: an identity marker line, the session context, the session files,
//! optional resume notes, then the mode's template body. Its `persona_hash`
//! (first 16 hex of the SHA-256 of the UTF-8 text) is stored in the DB and the
//! state so a model-side log can be tied to the exact persona.
//!
//! Placing the persona where each harness reads it is [`crate::adapters`]' job.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::settings::SessionPaths;

/// A persona mode (the template chosen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Socratic study mentor (the default).
    Study,
    /// Body-double study partner.
    CoStudy,
    /// Study-plan architect.
    PlanArchitect,
    /// Focus mentor (web `purpose: focus`; not a CLI `--mode`).
    Focus,
}

impl Mode {
    /// Values `studyloop study --mode` accepts.
    pub const CLI_ACCEPTED: &'static str = "study, co-study, plan-architect";

    /// Parse a CLI `--mode` value (`focus` is web-only).
    pub fn parse_cli(s: &str) -> Option<Self> {
        match s {
            "study" => Some(Self::Study),
            "co-study" => Some(Self::CoStudy),
            "plan-architect" => Some(Self::PlanArchitect),
            _ => None,
        }
    }

    /// Parse any mode name stored in the state file.
    pub fn parse(s: &str) -> Option<Self> {
        Self::parse_cli(s).or((s == "focus").then_some(Self::Focus))
    }

    /// The mode name (also the template's file stem).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Study => "study",
            Self::CoStudy => "co-study",
            Self::PlanArchitect => "plan-architect",
            Self::Focus => "focus",
        }
    }

    /// The default timer for the mode (pomodoro for co-study, else elapsed).
    pub fn default_timer(self) -> &'static str {
        if self == Self::CoStudy {
            "pomodoro"
        } else {
            "elapsed"
        }
    }

    fn template(self) -> &'static str {
        match self {
            Self::Study => include_str!("personas/study.md"),
            Self::CoStudy => include_str!("personas/co-study.md"),
            Self::PlanArchitect => include_str!("personas/plan-architect.md"),
            Self::Focus => include_str!("personas/focus.md"),
        }
    }
}

/// What the persona is built from.
#[derive(Debug, Clone)]
pub struct PersonaInput<'a> {
    /// The study topic as the learner typed it.
    pub topic: &'a str,
    /// Energy 1..=10.
    pub energy: u8,
    /// The mode.
    pub mode: Mode,
    /// The live-session files to name.
    pub session: &'a SessionPaths,
    /// Notes of the previous study session (resume only).
    pub previous_notes: Option<&'a str>,
    /// The session's spec directory (`session::spec`), named so the mentor
    /// knows where the texts its work follows go; `None` names none.
    pub spec_dir: Option<&'a std::path::Path>,
}

/// A built persona.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persona {
    /// The Markdown text.
    pub text: String,
    /// First 16 hex chars of its SHA-256.
    pub hash: String,
}

/// The marker line that opens every persona (docs/runner.md#product-persona-marker).
pub fn marker(mode: Mode) -> String {
    format!("<!-- PERSONA=studyloop-{} -->", mode.as_str())
}

/// First 16 hex characters of the SHA-256 of `text`.
pub fn persona_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    crate::ids::hex(&digest[..8])
}

/// Build the canonical persona.
pub fn build(input: &PersonaInput<'_>) -> Persona {
    let mut t = String::with_capacity(4096);
    let s = input.session;
    let _ = writeln!(t, "{}", marker(input.mode));
    let _ = writeln!(t, "# Study Session Context\n");
    let _ = writeln!(t, "**Topic:** {}", input.topic.trim());
    let _ = writeln!(t, "**Energy:** {}/10", input.energy);
    let _ = writeln!(t, "**Mode:** {}\n", input.mode.as_str());
    let _ = writeln!(t, "## Session Files for This Run\n");
    let _ = writeln!(t, "- Session state: `{}`", s.state_file().display());
    let _ = writeln!(t, "- Topics log: `{}`", s.topics().display());
    let _ = writeln!(t, "- Parking lot: `{}`", s.parking().display());
    if let Some(d) = input.spec_dir {
        let _ = writeln!(
            t,
            "- Spec directory: `{}` (write each text your work follows there, one file each: a plan, a brief, a drill's statement; it is kept with the session record and hidden from git)",
            d.display()
        );
    }
    t.push('\n');
    if let Some(notes) = input
        .previous_notes
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let _ = writeln!(t, "## Resuming Previous Session\n");
        let _ = writeln!(
            t,
            "Notes from the previous session on this topic:\n\n{notes}\n"
        );
    }
    t.push_str(input.mode.template());
    let hash = persona_hash(&t);
    Persona { text: t, hash }
}

/// `persona` followed by one labelled data block (e.g. the Labs drill the
/// session was started for), rehashed so `persona_hash` names what was sent.
pub fn with_data(persona: Persona, block: &str) -> Persona {
    let mut text = persona.text;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push('\n');
    text.push_str(block);
    text.push('\n');
    let hash = persona_hash(&text);
    Persona { text, hash }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn paths() -> SessionPaths {
        SessionPaths {
            dir: PathBuf::from("/h/.config/studyloop"),
        }
    }

    #[test]
    fn marker_first_then_sections_in_order() {
        let sp = paths();
        let p = build(&PersonaInput {
            topic: "SQL",
            energy: 7,
            mode: Mode::PlanArchitect,
            session: &sp,
            previous_notes: Some("Wins:\n- joins"),
            spec_dir: None,
        });
        assert!(
            p.text.starts_with(
                "<!-- PERSONA=studyloop-plan-architect -->\n# Study Session Context\n"
            )
        );
        let order = [
            "**Topic:** SQL",
            "**Energy:** 7/10",
            "## Session Files for This Run",
            "/h/.config/studyloop/session-topics.md",
            "## Resuming Previous Session",
            "## Tooling",
        ];
        let mut at = 0;
        for needle in order {
            let i = p.text[at..]
                .find(needle)
                .unwrap_or_else(|| panic!("{needle} missing or out of order"));
            at += i;
        }
        assert_eq!(p.hash.len(), 16);
        assert_eq!(p.hash, persona_hash(&p.text));
    }

    #[test]
    fn no_resume_section_without_notes_and_hash_is_stable() {
        let sp = paths();
        let a = build(&PersonaInput {
            topic: "x",
            energy: 5,
            mode: Mode::Study,
            session: &sp,
            previous_notes: None,
            spec_dir: None,
        });
        let b = build(&PersonaInput {
            topic: "x",
            energy: 5,
            mode: Mode::Study,
            session: &sp,
            previous_notes: Some("  "),
            spec_dir: None,
        });
        assert!(!a.text.contains("Resuming"));
        assert_eq!(a, b);
        // Known-answer check of the hash function itself.
        assert_eq!(persona_hash("abc"), "ba7816bf8f01cfea");
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::parse_cli("focus"), None);
        assert_eq!(Mode::parse("focus"), Some(Mode::Focus));
        for m in [Mode::Study, Mode::CoStudy, Mode::PlanArchitect] {
            assert_eq!(Mode::parse_cli(m.as_str()), Some(m));
        }
    }
}
