//! The session tools: `log_topic` (the feed `studyloop topic` writes, plus
//! the `study_progress` row the end would write, idempotently), `end_session`
//! (the product's own end) and `session_search` (the FTS5 search). Each
//! passes the scope gate first, like the CLI. A session or store error is
//! refused with the envelope's failure the CLI gives for it (`CliError::failure`,
//! the one mapping), so `session_search "  "` and `studyloop search "  " --json`
//! answer alike.

use serde_json::{Value, json};
use studyloop::cli::CliError;
use studyloop::context::Ctx;
use studyloop::envelope::{Code, Failure};
use studyloop::feeds::{self, TopicStatus};
use studyloop::session::{self, EndOutcome};

use crate::refusal::{invalid, storage};

/// The CLI's failure for `e` (a session, state or store error).
fn refuse(e: impl Into<CliError>) -> Failure {
    e.into().failure()
}

/// `log_topic(topic, status, note)`.
///
/// # Errors
/// `invalid:` for a bad status, `no_active_session` without a live session; the scope gate's.
pub fn log_topic(ctx: &Ctx, topic: &str, status: &str, note: &str) -> Result<Value, Failure> {
    let status = TopicStatus::parse(status).ok_or_else(|| {
        invalid(format!(
            "status `{}` is not accepted; use one of: {}",
            status.chars().take(30).collect::<String>(),
            TopicStatus::ACCEPTED
        ))
    })?;
    let (topic, note) = (
        studyloop::term::text(topic.trim()),
        studyloop::term::text(note.trim()),
    );
    if topic.is_empty() || topic.chars().count() > 200 || note.chars().count() > 2000 {
        return Err(invalid(
            "`topic` needs 1..200 characters and `note` at most 2000",
        ));
    }
    let loaded = session::load(ctx).map_err(refuse)?;
    let paths = &loaded.paths.session;
    let state = studyloop::state::StateStore::new(paths)
        .read()
        .map_err(refuse)?
        .filter(studyloop::state::SessionState::is_active)
        .ok_or_else(|| {
            Failure::new(
                Code::NoActiveSession,
                "no active study session; start one with `studyloop study TOPIC --agent NAME`",
            )
        })?;
    feeds::append_topic(
        paths,
        &studyloop::context::now_hhmm(),
        &topic,
        status,
        &note,
    )
    .map_err(|e| {
        storage(format!(
            "cannot append to {}: {e}",
            paths.topics().display()
        ))
    })?;
    let study_id = state.study_session_id.clone().unwrap_or_default();
    let session_topic = state.topic.clone().unwrap_or_default();
    let db = match status.confidence() {
        Some(conf) => match studyloop::store::Store::open(&loaded.paths.db).and_then(|s| {
            s.record_progress(
                &session_topic,
                &topic,
                conf,
                &note,
                &study_id,
                &studyloop::context::now_rfc3339(),
            )
        }) {
            Ok(()) => "saved",
            Err(_) => "failed",
        },
        None => "not_applicable",
    };
    Ok(
        json!({"logged": true, "topic": topic, "status": status.as_str(), "study_session_id": study_id, "db_write": db}),
    )
}

/// `end_session()`.
///
/// # Errors
/// The end's failure; the scope gate's.
pub fn end_session(ctx: &Ctx) -> Result<Value, Failure> {
    session::load(ctx).map_err(refuse)?;
    match session::end(ctx).map_err(refuse)? {
        EndOutcome::NothingActive => Ok(json!({"ended": false, "message": "No active session"})),
        EndOutcome::Ended(e) => Ok(
            json!({"ended": true, "study_session_id": e.study_id, "topic": e.topic,
            "duration_minutes": e.duration_minutes, "win_count": e.win_count, "struggle_count": e.struggle_count,
            "warnings": e.warnings}),
        ),
    }
}

/// `session_search(query, limit)`.
///
/// # Errors
/// `invalid_input` for a query with no words (the store's own refusal, as
/// `studyloop search --json` gives it); the scope gate's.
pub fn session_search(ctx: &Ctx, query: &str, limit: u32) -> Result<Value, Failure> {
    let loaded = session::load(ctx).map_err(refuse)?;
    // The product's one search: FTS5 and embeddings fused by rank, or lexical
    // with the reason in `notice` (the same object `studyloop search --json` prints).
    let avail = studyloop::embed::Availability::from_env(&ctx.env).map_err(invalid)?;
    let found =
        studyloop::store::search_db(&loaded.paths.db, query, limit, &avail).map_err(refuse)?;
    serde_json::to_value(found).map_err(storage)
}
