//! The web console's resume door (`"resume": true` on `POST /api/session/start`,
//! the Dashboard's "Resume my last session on this topic" box): the notes of the
//! newest ended session on the same topic go into the new session's persona, as
//! `studyloop study --resume` does for the CLI, headed by when that session
//! ended and how many days ago that is on the product's clock
//! ([`crate::clock`]), so the mentor can open with a review.

use axum::http::StatusCode;
use serde_json::json;

use super::start_req::{ApiError, err};
use crate::store::Store;

/// The resume notes for `topic`: when the last ended session on it ended, then
/// its notes (wins, struggles, parked questions).
///
/// # Errors
/// 404 naming the topic when no session on it has ended; 500 on a DB error.
pub fn previous_notes(db: &Store, topic: &str) -> Result<String, ApiError> {
    let row = db
        .last_ended_on(topic)
        .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let Some(row) = row else {
        let shown: String = topic.chars().take(80).collect();
        return Err(err(
            StatusCode::NOT_FOUND,
            format!("no ended session on topic `{shown}` to resume; start it without resume, or pick a topic you have studied"),
        )
        .with_details(json!({"topic": shown})));
    };
    let ended = row.ended_at.as_deref().unwrap_or("an unknown time");
    let ago = row
        .ended_at
        .as_deref()
        .and_then(crate::context::seconds_since)
        .map_or_else(|| "unknown".to_owned(), days_ago);
    let notes = row.notes.as_deref().map(str::trim).unwrap_or_default();
    let notes = if notes.is_empty() {
        "(that session recorded no notes)"
    } else {
        notes
    };
    Ok(format!(
        "Last session on this topic ended {ended} ({ago}); open with a short review of it.\n\n{notes}"
    ))
}

/// `seconds` as whole days in words.
fn days_ago(seconds: i64) -> String {
    match seconds.div_euclid(86_400) {
        i64::MIN..=0 => "earlier today".to_owned(),
        1 => "1 day ago".to_owned(),
        n => format!("{n} days ago"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_whole_days_in_words() {
        assert_eq!(days_ago(-5), "earlier today");
        assert_eq!(days_ago(3_600), "earlier today");
        assert_eq!(days_ago(86_400), "1 day ago");
        assert_eq!(days_ago(86_400 * 2 + 5), "2 days ago");
    }
}
