//! The certification preflight: every check that needs no process but git, in the
//! order a fix is cheapest (name, approvals, tree, credentials). Approvals go through
//! the one policy (`studyloop_acceptance::approval::decide`): `harness:<h>` unapproved
//! is a named skip; an unapproved judge seat is not (the harness lanes and ungraded
//! journeys still certify; the graded journey is then the named skip), and only an
//! approved seat's missing key is reported. Ready = every check passed;
//! a missing or expired credential is a named skip ([`PreflightError::Skip`], exit
//! [`EXIT_SKIPPED`], distinct from a failure); a bad name or a dirty tree is a
//! failure. Messages name files and variables, never their values.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use studyloop_acceptance::approval::{self, Approvals, Capability};
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::RepoIdentity;
use studyloop_acceptance::harness_spec::credentials;
use studyloop_acceptance::selection::{HARNESS_ORDER, HarnessName};

use crate::council::{Roster, SeatApprovals};

/// The exit status of a skipped certification (credentials missing): not 0 (nothing
/// was certified), not 1 (nothing failed), not 2 (the command could run).
pub const EXIT_SKIPPED: u8 = 3;

/// Dirty paths shown before "and N more".
const SHOWN_PATHS: usize = 20;

/// What a ready preflight found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    /// The harness.
    pub harness: HarnessName,
    /// The commit the run will certify (the tree is clean).
    pub commit: String,
    /// The harness binary on PATH.
    pub binary: PathBuf,
    /// The credential sources found (names only).
    pub found: Vec<String>,
    /// The council that will grade the journey (every approved seat has its key).
    pub council: String,
    /// The council's seats not approved (each a named skip reason): the graded
    /// journey will be a named skip naming them, and the sign-off cannot PASS.
    pub unapproved_judges: Vec<String>,
}

/// Why certification cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreflightError {
    /// Not one of the six harnesses.
    #[error(
        "unknown harness {name:?}; accepted: {accepted} (fix: `studyloop-uat certify codex --real-auth`, for example)"
    )]
    UnknownHarness {
        /// The name given (debug-quoted: it may hold anything).
        name: String,
        /// The accepted set.
        accepted: String,
    },
    /// The repository is not a git checkout (or git is missing): no commit to certify.
    #[error(
        "{}: no git commit could be read (not a git checkout, or git is not on PATH): a certification must name the commit it proves; run it from a clone",
        repo.display()
    )]
    NoCommit {
        /// The repository directory.
        repo: PathBuf,
    },
    /// Uncommitted changes: the run would prove no commit.
    #[error(
        "{}: the tree is dirty, so a certification would prove no commit: {}; commit or stash them (`git stash -u`), then re-run `studyloop-uat certify`",
        repo.display(),
        shown(paths)
    )]
    DirtyTree {
        /// The repository directory.
        repo: PathBuf,
        /// Every path `git status` lists.
        paths: Vec<String>,
    },
    /// `STUDYLOOP_ACC_APPROVE` holds malformed or unknown entries.
    #[error("{0}")]
    Approvals(String),
    /// Credentials missing or expired: a named skip, nothing launched.
    #[error("skipped: {}", reasons.join("; "))]
    Skip {
        /// One line per missing thing, each with its fix.
        reasons: Vec<String>,
    },
}

impl PreflightError {
    /// The process exit status: [`EXIT_SKIPPED`] for a skip, 2 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            PreflightError::Skip { .. } => EXIT_SKIPPED,
            _ => 2,
        }
    }
}

fn shown(paths: &[String]) -> String {
    let mut text = paths
        .iter()
        .take(SHOWN_PATHS)
        .map(|p| format!("{p:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN_PATHS {
        let _ = write!(text, " and {} more", paths.len() - SHOWN_PATHS);
    }
    text
}

/// Checks everything `studyloop-uat certify NAME --real-auth` needs, in `caller`'s environment, for the
/// repository at `repo`, with `council` of `roster` as the graded journey's judges.
/// Starts no process but git.
///
/// # Errors
/// [`PreflightError`].
pub fn preflight(
    name: &str,
    caller: &CallerEnv,
    repo: &Path,
    roster: &Roster,
    council: &str,
    now_ms: i64,
) -> Result<Ready, PreflightError> {
    let harness: HarnessName = name.parse().map_err(|()| PreflightError::UnknownHarness {
        name: name.chars().take(80).collect(),
        accepted: HARNESS_ORDER.map(HarnessName::as_str).join(", "),
    })?;
    let approvals = Approvals::from_env(caller)
        .and_then(|a| {
            a.check_judges(|c, s| {
                roster
                    .council(c)
                    .is_ok_and(|c| c.seats.iter().any(|seat| seat.id == s))
            })?;
            Ok(a)
        })
        .map_err(|e| PreflightError::Approvals(e.to_string()))?;
    let (commit, paths) =
        RepoIdentity::dirty_paths(repo, caller).ok_or_else(|| PreflightError::NoCommit {
            repo: repo.to_owned(),
        })?;
    if !paths.is_empty() {
        return Err(PreflightError::DirtyTree {
            repo: repo.to_owned(),
            paths,
        });
    }
    let mut reasons: Vec<String> = approval::decide(&approvals, &Capability::Harness(harness))
        .unmet()
        .into_iter()
        .collect();
    let check = credentials::check(harness, caller, now_ms);
    reasons.extend(check.skip_reason());
    let (gaps, unapproved_judges) = council_gaps(roster, council, caller, &approvals);
    reasons.extend(gaps);
    match (reasons.is_empty(), check.binary) {
        (true, Some(binary)) => Ok(Ready {
            harness,
            commit,
            binary,
            found: check.found,
            council: council.to_owned(),
            unapproved_judges,
        }),
        _ => Err(PreflightError::Skip { reasons }),
    }
}

/// Every approved seat of `council` that would be absent for want of a key, by name,
/// with the variable to set (the grading records such a seat as absent, and the
/// sign-off then refuses the run: better said before any spend); and every seat not
/// approved (its named skip), which no key check is made for.
fn council_gaps(
    roster: &Roster,
    council: &str,
    caller: &CallerEnv,
    approvals: &Approvals,
) -> (Vec<String>, Vec<String>) {
    let Ok(c) = roster.council(council) else {
        return (
            vec![format!(
                "council `{council}` is not in the pinned roster; the sign-off definition names it"
            )],
            Vec::new(),
        );
    };
    // Certify runs in real-auth mode: the gateway is never the local model here.
    let policy = SeatApprovals {
        approvals,
        local_gateway: false,
    };
    let unapproved = policy.unapproved(council, c);
    let keys: BTreeMap<String, String> = caller
        .iter()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v.to_str()?.to_owned())))
        .filter(|(_, v)| !v.trim().is_empty())
        .collect();
    let gaps = c
        .seats
        .iter()
        .filter(|seat| policy.unmet(council, &seat.id, seat.backend).is_none())
        .filter_map(|seat| {
            let absent = seat.endpoint(&keys, None).err()?;
            Some(format!(
                "council `{council}` seat `{}`: {absent}; export it to grade the journey",
                seat.id
            ))
        })
        .collect();
    (gaps, unapproved)
}

#[cfg(test)]
#[path = "preflight_tests.rs"]
mod tests;
