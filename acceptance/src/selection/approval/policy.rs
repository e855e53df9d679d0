//! `STUDYLOOP_ACC_APPROVE` parsed once into [`Approvals`], and [`decide`]: the one
//! policy function every caller asks.
//!
//! Forms (decided for issue 29): an entry is a capability id, alone or followed by
//! the reasons it approves in brackets: `harness:codex` approves every reason the
//! capability declares (and the run prints and records which), while
//! `harness:codex[chargeable]` approves only `chargeable`, so a capability that also
//! declares `writes-real-home` stays a named skip saying so. Entries are separated
//! by commas outside brackets. Nothing is trimmed or case-folded: whitespace and
//! control characters are errors, so what was approved is exactly what was typed.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::approval::capability::{Capability, REASONS, Reason};
use crate::caller_env::CallerEnv;
use crate::selection::{ACC_APPROVE, HARNESS_ORDER, HarnessName};

/// A longer value is refused before it is parsed (no person types 4 KiB of ids).
pub const MAX_VALUE_BYTES: usize = 4096;

/// How much of a bad entry an error quotes.
const QUOTED_CHARS: usize = 80;

/// Longest council, seat, provider or model name accepted.
const MAX_NAME: usize = 128;

/// The accepted forms, named by every error.
pub const ACCEPTED_FORMS: &str = "comma-separated entries, each exactly one capability: `harness:<codex|claude|kiro|pi|opencode|grok>`, `learner:<gateway|openai|openrouter|gemini|anthropic>/<model>` or `judge:<council>/<seat>`, optionally followed by the reasons it approves, `[chargeable,credentialed,writes-real-home]`; no wildcard, no prefix, no whitespace (e.g. STUDYLOOP_ACC_APPROVE=harness:codex,judge:release/openai-gpt4o)";

/// One approval as recorded in a bundle: the id and the reasons approved (never a key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRecord {
    /// The capability id, e.g. `harness:codex`.
    pub capability: String,
    /// The reasons approved, in [`REASONS`] order.
    pub reasons: Vec<Reason>,
}

impl ApprovalRecord {
    /// `harness:codex[chargeable,credentialed,writes-real-home]`.
    #[must_use]
    pub fn entry(&self) -> String {
        let words: Vec<&str> = self.reasons.iter().map(|r| r.as_str()).collect();
        format!("{}[{}]", self.capability, words.join(","))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    capability: Capability,
    /// `None`: every declared reason (the bare form).
    reasons: Option<BTreeSet<Reason>>,
}

/// The operator's standing approvals, parsed from `STUDYLOOP_ACC_APPROVE`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Approvals {
    entries: Vec<Entry>,
}

/// What [`decide`] said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Approved for every reason it declares.
    Approved(ApprovalRecord),
    /// Not approved: a named skip; nothing may launch or bill.
    Unapproved(Unapproved),
}

impl Decision {
    /// The skip reason when unapproved.
    #[must_use]
    pub fn unmet(&self) -> Option<String> {
        match self {
            Decision::Approved(_) => None,
            Decision::Unapproved(u) => Some(u.to_string()),
        }
    }
}

/// An unapproved capability; `Display` is the skip reason: the capability, its
/// reasons and the exact entry that would approve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unapproved {
    /// The capability.
    pub capability: Capability,
    /// Declared reasons no entry approves.
    pub missing: Vec<Reason>,
    /// The bracketed entry that approved too little, when there was one.
    pub partial: Option<String>,
}

impl fmt::Display for Unapproved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.capability;
        let declared: Vec<String> = c
            .reasons()
            .iter()
            .map(|r| format!("{r} ({})", r.meaning()))
            .collect();
        write!(f, "capability `{c}` is not approved")?;
        if let Some(entry) = &self.partial {
            let missing: Vec<&str> = self.missing.iter().map(|r| r.as_str()).collect();
            write!(
                f,
                " (the entry `{entry}` does not cover {})",
                missing.join(", ")
            )?;
        }
        write!(
            f,
            "; it declares {}; nothing was launched and nothing billed; to approve it, add the entry `{c}` (or `{}`) to {ACC_APPROVE}",
            declared.join(", "),
            c.with_reasons()
        )
    }
}

/// The ONE approval policy: whether `capability` may run under `approvals`. Exact
/// match of the whole id (no wildcard, no prefix), and every declared reason covered.
#[must_use]
pub fn decide(approvals: &Approvals, capability: &Capability) -> Decision {
    let declared = capability.reasons();
    let Some(entry) = approvals
        .entries
        .iter()
        .find(|e| e.capability == *capability)
    else {
        return Decision::Unapproved(Unapproved {
            capability: capability.clone(),
            missing: declared.to_vec(),
            partial: None,
        });
    };
    let missing: Vec<Reason> = match &entry.reasons {
        None => Vec::new(),
        Some(given) => declared
            .iter()
            .copied()
            .filter(|r| !given.contains(r))
            .collect(),
    };
    if missing.is_empty() {
        Decision::Approved(ApprovalRecord {
            capability: capability.to_string(),
            reasons: declared.to_vec(),
        })
    } else {
        Decision::Unapproved(Unapproved {
            capability: capability.clone(),
            missing,
            partial: Some(entry.text()),
        })
    }
}

impl Entry {
    fn text(&self) -> String {
        match &self.reasons {
            None => self.capability.to_string(),
            Some(r) => {
                let words: Vec<&str> = r.iter().map(|r| r.as_str()).collect();
                format!("{}[{}]", self.capability, words.join(","))
            }
        }
    }
}

impl Approvals {
    /// Parses `STUDYLOOP_ACC_APPROVE` from the runner's own captured environment.
    ///
    /// # Errors
    /// Every unusable entry at once ([`ApprovalErrors`]).
    pub fn from_env(env: &CallerEnv) -> Result<Self, ApprovalErrors> {
        Self::parse(env.var(ACC_APPROVE).as_deref())
    }

    /// Parses one value; unset and empty mean no approval.
    ///
    /// # Errors
    /// Every unusable entry at once ([`ApprovalErrors`]).
    pub fn parse(raw: Option<&str>) -> Result<Self, ApprovalErrors> {
        let raw = raw.unwrap_or("");
        if raw.is_empty() {
            return Ok(Self::default());
        }
        if raw.len() > MAX_VALUE_BYTES {
            return Err(ApprovalErrors(vec![ApprovalError::TooLong {
                bytes: raw.len(),
            }]));
        }
        let mut errors = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        for (i, text) in split_entries(raw).into_iter().enumerate() {
            match parse_entry(text) {
                Ok(entry) if entries.iter().any(|e| e.capability == entry.capability) => {
                    errors.push(ApprovalError::Duplicate {
                        entry: quoted(text),
                        capability: entry.capability.to_string(),
                    });
                }
                Ok(entry) => entries.push(entry),
                Err(why) => errors.push(ApprovalError::Entry {
                    position: i + 1,
                    entry: quoted(text),
                    why,
                }),
            }
        }
        if errors.is_empty() {
            Ok(Self { entries })
        } else {
            Err(ApprovalErrors(errors))
        }
    }

    /// Every approval that fully covers its capability, as recorded in a bundle.
    #[must_use]
    pub(crate) fn in_force(&self) -> Vec<ApprovalRecord> {
        self.entries
            .iter()
            .filter_map(|e| match decide(self, &e.capability) {
                Decision::Approved(record) => Some(record),
                Decision::Unapproved(_) => None,
            })
            .collect()
    }

    /// Every judge entry whose council and seat `known` does not accept (the
    /// roster lives in the UAT crate, so its callers check judge ids with it).
    ///
    /// # Errors
    /// Every unknown judge entry at once.
    pub fn check_judges(&self, known: impl Fn(&str, &str) -> bool) -> Result<(), ApprovalErrors> {
        let unknown: Vec<ApprovalError> = self
            .entries
            .iter()
            .filter_map(|e| match &e.capability {
                Capability::Judge { council, seat } if !known(council, seat) => {
                    Some(ApprovalError::UnknownJudge { entry: e.text() })
                }
                _ => None,
            })
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(ApprovalErrors(unknown))
        }
    }

    /// True when nothing is approved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Commas outside brackets separate entries (reasons inside brackets use commas too).
fn split_entries(raw: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in raw.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&raw[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&raw[start..]);
    out
}

fn parse_entry(text: &str) -> Result<Entry, String> {
    if text.is_empty() {
        return Err("an empty entry (two commas, or a trailing one)".into());
    }
    if let Some(c) = text.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "contains {c:?}: whitespace and control characters are never part of a capability id"
        ));
    }
    if text.contains(['*', '?']) {
        return Err("a wildcard: an approval names exactly one capability".into());
    }
    let (id, reasons) = match text.split_once('[') {
        None => (text, None),
        Some((id, rest)) => {
            let list = rest
                .strip_suffix(']')
                .filter(|l| !l.contains(['[', ']']))
                .ok_or("unbalanced brackets: the reasons are one `[a,b]` at the end")?;
            (id, Some(parse_reasons(list)?))
        }
    };
    Ok(Entry {
        capability: parse_id(id)?,
        reasons,
    })
}

fn parse_reasons(list: &str) -> Result<BTreeSet<Reason>, String> {
    let mut set = BTreeSet::new();
    for word in list.split(',') {
        let reason = Reason::from_word(word).ok_or_else(|| {
            format!(
                "unknown reason {}; reasons: {}",
                quoted(word),
                REASONS.map(Reason::as_str).join(", ")
            )
        })?;
        if !set.insert(reason) {
            return Err(format!("reason `{reason}` given twice"));
        }
    }
    Ok(set)
}

/// A capability id exactly as an approval entry names one (no reasons, no
/// wildcard): how a recorded id (a bundle's `learner_capability`) is read back.
impl std::str::FromStr for Capability {
    type Err = String;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        match parse_entry(id)? {
            Entry {
                capability,
                reasons: None,
            } => Ok(capability),
            Entry { .. } => Err("a capability id carries no reasons".into()),
        }
    }
}

fn parse_id(id: &str) -> Result<Capability, String> {
    let (kind, rest) = id
        .split_once(':')
        .ok_or("no kind: an id starts `harness:`, `learner:` or `judge:`")?;
    match kind {
        "harness" => rest
            .parse::<HarnessName>()
            .map(Capability::Harness)
            .map_err(|()| {
                format!(
                    "unknown harness {} (whole names only, no prefix); harnesses: {}",
                    quoted(rest),
                    HARNESS_ORDER.map(HarnessName::as_str).join(", ")
                )
            }),
        "learner" => {
            let (provider, model) = pair(rest, "learner:<provider>/<model>")?;
            let known = provider == "gateway"
                || studyloop_actors::direct::profile(provider).is_ok_and(|p| p.slug == provider);
            if !known {
                return Err(format!(
                    "unknown learner provider {}; providers: gateway, openai, openrouter, gemini, anthropic",
                    quoted(provider)
                ));
            }
            name(model, "model", true)?;
            Ok(Capability::Learner {
                provider: provider.to_owned(),
                model: model.to_owned(),
            })
        }
        "judge" => {
            let (council, seat) = pair(rest, "judge:<council>/<seat>")?;
            name(council, "council", false)?;
            name(seat, "seat", false)?;
            Ok(Capability::Judge {
                council: council.to_owned(),
                seat: seat.to_owned(),
            })
        }
        other => Err(format!(
            "unknown kind {}; kinds: harness, learner, judge",
            quoted(other)
        )),
    }
}

fn pair<'a>(rest: &'a str, form: &str) -> Result<(&'a str, &'a str), String> {
    rest.split_once('/')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| format!("not of the form `{form}` (both parts, no prefix)"))
}

fn name(value: &str, what: &str, slash: bool) -> Result<(), String> {
    let ok = value.len() <= MAX_NAME
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(b, b'.' | b'_' | b'-' | b':' | b'@')
                || (slash && b == b'/')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the {what} {:?} is not a name (letters, digits, `._-:@`{}, at most {MAX_NAME})",
            value.chars().take(QUOTED_CHARS).collect::<String>(),
            if slash { ", `/`" } else { "" }
        ))
    }
}

fn quoted(text: &str) -> String {
    let cut: String = text.chars().take(QUOTED_CHARS).collect();
    if cut.len() < text.len() {
        format!("{cut:?}…")
    } else {
        format!("{cut:?}")
    }
}

/// One unusable part of `STUDYLOOP_ACC_APPROVE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// Longer than [`MAX_VALUE_BYTES`]: not parsed at all.
    #[error("{ACC_APPROVE} is {bytes} bytes, more than {MAX_VALUE_BYTES}: refused unread")]
    TooLong {
        /// Its length.
        bytes: usize,
    },
    /// An entry that is not one capability id.
    #[error("{ACC_APPROVE} entry {position}, {entry}: {why}")]
    Entry {
        /// 1-based.
        position: usize,
        /// The entry, debug-quoted and cut.
        entry: String,
        /// What is wrong.
        why: String,
    },
    /// The same capability approved twice.
    #[error(
        "{ACC_APPROVE} entry {entry} approves `{capability}` a second time: give each capability once"
    )]
    Duplicate {
        /// The repeated entry.
        entry: String,
        /// Its capability.
        capability: String,
    },
    /// A judge seat the pinned roster does not have.
    #[error(
        "{ACC_APPROVE} entry `{entry}` names no seat of the pinned council roster (uat/council_v2.yaml)"
    )]
    UnknownJudge {
        /// The entry.
        entry: String,
    },
}

/// Every unusable entry of one value, listed before any trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalErrors(pub Vec<ApprovalError>);

impl fmt::Display for ApprovalErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for error in &self.0 {
            writeln!(f, "{error}")?;
        }
        write!(f, "{ACC_APPROVE}: accepted forms: {ACCEPTED_FORMS}")
    }
}

impl std::error::Error for ApprovalErrors {}
