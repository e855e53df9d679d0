//! What reached the model, read from the stub's request log: each turn's request
//! carried the study persona and the whole history, and a reply is the stub's own.

use studyloop_stubs::LogRecord;

use super::CheckError;

/// The persona word the product's canonical study persona carries
/// (`<!-- PERSONA=studyloop-study -->`), as the stub reports it: the one marker
/// every lane and journey checks (cli-tmux, web-acp, web-acp-browser, the UAT
/// study journeys), since each starts a learner's study session.
pub const STUDY_PERSONA: &str = "studyloop-study";

/// For each stub turn `n` in `turns`: the request that got the reply with
/// nonce(seed, n) carried the persona marker and exactly `n` real user turns
/// (the history length equals the turn number).
pub fn stub_history(
    records: &[LogRecord],
    seed: u64,
    turns: &[u64],
    persona: &str,
) -> Result<(), CheckError> {
    for &n in turns {
        let nonce = studyloop_stubs::nonce(seed, n);
        let prefix = format!("MENTOR-REPLY {n} {nonce}");
        // A side request (opencode's title generator) can be answered with the
        // same turn number; the turn is proven when one answer fits.
        let answered: Vec<&LogRecord> = records
            .iter()
            .filter(|r| r.reply.as_deref().is_some_and(|t| t.starts_with(&prefix)))
            .collect();
        let Some(first) = answered.first() else {
            return Err(CheckError::TurnUnanswered { n, nonce });
        };
        if answered
            .iter()
            .any(|r| r.user_turns == n && r.persona.as_deref() == Some(persona))
        {
            continue;
        }
        if first.user_turns != n {
            return Err(CheckError::HistoryLength {
                n,
                got: first.user_turns,
            });
        }
        return Err(CheckError::Persona {
            n,
            got: first.persona.clone(),
            want: persona.to_owned(),
        });
    }
    Ok(())
}

/// The reply to stub turn `n` is proven: with the cell's stub (`seed` given)
/// it carries that turn's nonce; without one (real auth) it is not blank.
///
/// # Errors
/// [`CheckError::ReplyNotProven`] or [`CheckError::EmptyReply`].
pub fn prove_reply(seed: Option<u64>, n: u64, reply: &str) -> Result<(), CheckError> {
    let Some(seed) = seed else {
        return if reply.trim().is_empty() {
            Err(CheckError::EmptyReply { n })
        } else {
            Ok(())
        };
    };
    let want = format!("MENTOR-REPLY {n} {}", studyloop_stubs::nonce(seed, n));
    if reply.contains(&want) {
        Ok(())
    } else {
        Err(CheckError::ReplyNotProven {
            n,
            reply: reply.to_owned(),
            want,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: u64, seed: u64, persona: Option<&str>) -> LogRecord {
        let line = serde_json::json!({
            "seq": n, "time": "2026-11-30T00:00:00Z", "method": "POST", "path": "/v1/messages",
            "model": "stub-model", "protocol": "messages", "stream": true, "message_count": n,
            "user_turns": n, "persona": persona, "user_agent": null,
            "reply": format!("MENTOR-REPLY {n} {}: hello", studyloop_stubs::nonce(seed, n)),
            "usage": {"input_tokens": 1, "output_tokens": 1}, "status": 200, "fault": null
        });
        serde_json::from_value(line).expect("a LogRecord")
    }

    #[test]
    fn stub_history_needs_each_turn_with_its_history_and_persona() {
        let recs = vec![
            record(1, 7, Some(STUDY_PERSONA)),
            record(2, 7, Some(STUDY_PERSONA)),
        ];
        assert_eq!(stub_history(&recs, 7, &[1, 2], STUDY_PERSONA), Ok(()));
        let e = stub_history(&recs, 7, &[3], STUDY_PERSONA)
            .unwrap_err()
            .to_string();
        assert!(e.contains("turn 3"), "{e}");
        let e = stub_history(&recs, 8, &[1], STUDY_PERSONA)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nonce"), "{e}");
        let wrong = vec![record(1, 7, Some("other"))];
        assert!(
            stub_history(&wrong, 7, &[1], STUDY_PERSONA)
                .unwrap_err()
                .to_string()
                .contains("persona")
        );
    }
}
