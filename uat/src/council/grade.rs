//! Running the council on one bundle: build the prompt once, ask each seat once under the
//! judge budget, check each reply, arbitrate, and write `ARBITRATION.md`,
//! `arbitration.json` and each seat's redacted reply into the private sibling directory
//! `<bundle>.arbitration/`.

use std::path::PathBuf;
use std::time::Duration;

use studyloop_actors::llm::cassette::{Cassette, CassetteMode};
use studyloop_actors::llm::{ChatClient, ChatMessage, GuardedChatError};
use studyloop_actors::{Budget, BudgetError, EnvSource};
use studyloop_redaction::{RedactionError, RedactionRules, Redactor};
use studyloop_rubrics::{Facts, Rubric};

use crate::bundle::Bundle;
use crate::bundle_summary;
use crate::council::approval::SeatApprovals;
use crate::council::arbitrate::{
    ARBITRATION_SCHEMA, Arbitration, Pin, SeatResult, SeatStatus, arbitrate,
};
use crate::council::roster::{Roster, Seat, StubTarget};
use crate::council::{prompt, reply, report};

/// The arbitration's machine-readable file.
pub const ARBITRATION_JSON: &str = "arbitration.json";
/// The arbitration's human-readable file.
pub const ARBITRATION_MD: &str = "ARBITRATION.md";

/// Why a bundle could not be graded at all (a seat failing is not one of these: it is
/// recorded as unscored).
#[derive(Debug, thiserror::Error)]
pub enum CouncilError {
    /// The council name is not in the roster.
    #[error("no council named `{name}` in the roster; known: {known}")]
    UnknownCouncil {
        /// The name asked for.
        name: String,
        /// The roster's council names.
        known: String,
    },
    /// The roster's budget cannot be built.
    #[error("the council's judge budget is invalid: {0}")]
    Budget(#[from] BudgetError),
    /// The bundle's summary for the seats still leaks; grading would send it to models.
    #[error("refusing to send this bundle's summary to any seat: {0}")]
    Summary(#[from] RedactionError),
    /// The arbitration could not be written.
    #[error("cannot write {}: {source}; check the bundle's parent directory is writable", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What the grader knows about the cell behind a bundle.
#[derive(Debug, Clone, Copy, Default)]
pub struct CellContext {
    /// The sign-off definition requires the cell.
    pub required: bool,
    /// The cell was recorded as skipped.
    pub skipped: bool,
}

/// Everything grading needs besides the bundle.
pub struct Grader<'a> {
    /// The pinned rubric.
    pub rubric: &'a Rubric,
    /// The pinned redaction rules (their pin is recorded).
    pub rules: &'a RedactionRules,
    /// The redactor applied to everything a seat sees or says (rules plus known secrets).
    pub redactor: &'a Redactor,
    /// The pinned roster.
    pub roster: &'a Roster,
    /// Which council to convene.
    pub council: &'a str,
    /// Where seat credentials come from (passed explicitly, never read implicitly).
    pub env: &'a dyn EnvSource,
    /// Where stub seats are reached this run.
    pub stub: Option<StubTarget>,
    /// Records or replays every seat's traffic (`STUDYLOOP_ACC_CASSETTE`), scoped by
    /// the cell and keyed by the seat's question (`council::replay`).
    pub cassette: Option<&'a Cassette>,
    /// Which seats may be asked: a seat that bills (`council::approval`) and is not
    /// approved is recorded absent, with its named skip reason, and never contacted.
    pub approvals: SeatApprovals<'a>,
}

/// What every seat is asked about one bundle.
struct Question<'b> {
    bundle: &'b Bundle,
    prompt: &'b prompt::SeatPrompt,
    citable: &'b std::collections::BTreeSet<String>,
}

/// A finished grading: the arbitration plus each asked seat's redacted raw reply.
#[derive(Debug, Clone)]
pub struct Graded {
    /// The arbitration.
    pub arbitration: Arbitration,
    /// Seat id → its reply text, redacted.
    pub replies: Vec<(String, String)>,
}

impl Grader<'_> {
    /// Grades `bundle`.
    ///
    /// # Errors
    /// [`CouncilError`] when the council is unknown, its budget is invalid, or the
    /// bundle's summary would leak. Seat failures are recorded, not returned.
    pub fn grade(&self, bundle: &Bundle, cell: CellContext) -> Result<Graded, CouncilError> {
        let council =
            self.roster
                .council(self.council)
                .map_err(|e| CouncilError::UnknownCouncil {
                    name: e.name,
                    known: e.known,
                })?;
        let summary = self
            .redactor
            .summary(&bundle_summary::bundle_summary(bundle))?;
        let limits = council.evidence.unwrap_or(prompt::DEFAULT_LIMITS);
        let prompt = prompt::build_within(self.rubric, &summary, bundle, self.redactor, limits);
        let citable = bundle.citable();
        let question = Question {
            bundle,
            prompt: &prompt,
            citable: &citable,
        };
        let mut budget = Budget::new(
            council.budget.max_turns,
            Some(council.budget.max_output_tokens),
        )?;
        let timeout = Duration::from_secs(council.request_timeout_secs);
        let mut seats = Vec::new();
        let mut replies = Vec::new();
        for seat in &council.seats {
            let (status, output_tokens, elapsed_ms, reply) = self.ask(
                seat,
                &question,
                &mut budget,
                timeout,
                council.max_reply_tokens,
            );
            if let Some(text) = reply {
                replies.push((seat.id.clone(), text));
            }
            seats.push(SeatResult {
                id: seat.id.clone(),
                backend: seat.backend,
                model: seat.model.clone(),
                output_tokens,
                elapsed_ms,
                status,
            });
        }
        let manifest = bundle.manifest();
        let facts = Facts {
            cell_required: cell.required,
            cell_skipped: cell.skipped,
            bundle_problems: bundle.problems().to_vec(),
            outcome: serde_json::to_value(manifest.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned)),
            ..Facts::default()
        };
        let (rejections, criteria) = arbitrate(self.rubric, &seats, facts);
        let arbitration = Arbitration {
            schema_version: ARBITRATION_SCHEMA,
            bundle_run_id: manifest.run_id.clone(),
            cell: manifest.cell.clone(),
            manifest_digest: bundle.digest(),
            date: studyloop_acceptance::clock::now_rfc3339(),
            council: self.council.to_owned(),
            council_pin: Pin {
                version: self.roster.version(),
                sha256: self.roster.sha256().to_owned(),
            },
            rubric_pin: Pin {
                version: self.rubric.version(),
                sha256: self.rubric.sha256().to_owned(),
            },
            redaction_pin: Pin {
                version: self.rules.version(),
                sha256: self.rules.sha256().to_owned(),
            },
            seats,
            rejections,
            criteria,
            judge_turns: budget.turns_taken(),
            judge_output_tokens: budget.output_tokens_spent(),
        };
        Ok(Graded {
            arbitration,
            replies,
        })
    }

    /// Asks one seat; returns its status, its output tokens, the request's time and its
    /// redacted reply text.
    fn ask(
        &self,
        seat: &Seat,
        question: &Question<'_>,
        budget: &mut Budget,
        timeout: Duration,
        max_tokens: u32,
    ) -> (SeatStatus, Option<u64>, Option<u64>, Option<String>) {
        let Question {
            bundle,
            prompt,
            citable,
        } = *question;
        // The one policy first: an unapproved seat is never built a client, so it
        // sends nothing. A replay sends nothing either (a miss is an error, not a call).
        let replay = self
            .cassette
            .is_some_and(|c| c.mode() == CassetteMode::Replay);
        if !replay && let Some(reason) = self.approvals.unmet(self.council, &seat.id, seat.backend)
        {
            return (SeatStatus::Absent { reason }, None, None, None);
        }
        let endpoint = match seat.endpoint(self.env, self.stub.as_ref()) {
            Ok(endpoint) => endpoint,
            Err(absent) => {
                let reason = absent.to_string();
                return (SeatStatus::Absent { reason }, None, None, None);
            }
        };
        let unscored = |reason: String| SeatStatus::Unscored {
            reason: self.redactor.redact(&reason),
        };
        let client = match ChatClient::new(endpoint, timeout) {
            Ok(client) => client,
            Err(e) => return (unscored(e.to_string()), None, None, None),
        };
        let client = match seat.structured_output {
            Some(dialect) => client.with_response_format(
                dialect.response_format(reply::json_schema(self.rubric, citable)),
            ),
            None => client,
        };
        let client = match self.cassette {
            Some(cassette) => client
                .with_cassette(cassette.tap(format!("{}::council", bundle.manifest().cell)))
                .with_replay_identity(super::replay::identity(
                    self.council,
                    &seat.id,
                    self.rubric.sha256(),
                    bundle,
                )),
            None => client,
        };
        let started = std::time::Instant::now();
        let asked = client.chat_within(
            budget,
            &prompt.system,
            &[ChatMessage::user(prompt.user.clone())],
            max_tokens,
        );
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).ok();
        let response = match asked {
            Ok(response) => response,
            Err(GuardedChatError::Exhausted(why)) => {
                return (
                    unscored(format!("not asked: the judge budget is spent ({why})")),
                    None,
                    None,
                    None,
                );
            }
            Err(e) => {
                let reason = format!("the request failed: {e}");
                return (unscored(reason), None, elapsed_ms, None);
            }
        };
        let text = self.redactor.redact(&response.text);
        let status = match reply::parse(&text, self.rubric, citable) {
            Ok(mut scores) => {
                for score in scores.values_mut() {
                    score.rationale = self.redactor.redact(&score.rationale);
                }
                SeatStatus::Scored { scores }
            }
            Err(reason) => unscored(reason.to_string()),
        };
        (status, response.usage.output_tokens, elapsed_ms, Some(text))
    }
}

/// Writes the grading into `<bundle>.arbitration/` (0700; files 0600, each atomic) and
/// returns that directory.
///
/// # Errors
/// [`CouncilError::Write`] naming the path that could not be written.
pub fn write(bundle: &Bundle, graded: &Graded) -> Result<PathBuf, CouncilError> {
    let dir = bundle.arbitration_dir();
    let fail = |path: PathBuf| move |source| CouncilError::Write { path, source };
    let seats_dir = dir.join("seats");
    studyloop_acceptance::private_fs::create_dir(&dir).map_err(fail(dir.clone()))?;
    studyloop_acceptance::private_fs::create_dir(&seats_dir).map_err(fail(seats_dir.clone()))?;
    for (seat, text) in &graded.replies {
        let path = seats_dir.join(format!("{seat}.txt"));
        crate::atomic::write(&path, text.as_bytes(), 0o600).map_err(fail(path.clone()))?;
    }
    let json_path = dir.join(ARBITRATION_JSON);
    // An unserialisable arbitration is an error, never an empty evidence file.
    let mut json = serde_json::to_string_pretty(&graded.arbitration)
        .map_err(|e| fail(json_path.clone())(e.into()))?;
    json.push('\n');
    crate::atomic::write(&json_path, json.as_bytes(), 0o600).map_err(fail(json_path.clone()))?;
    let md_path = dir.join(ARBITRATION_MD);
    crate::atomic::write(
        &md_path,
        report::render(&graded.arbitration).as_bytes(),
        0o600,
    )
    .map_err(fail(md_path.clone()))?;
    Ok(dir)
}
