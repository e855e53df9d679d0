//! What the learner reads when a turn fails: the agent's JSON-RPC error (message,
//! code and its `data`, where adapters put the model provider's own words, e.g. a
//! 429) classified into one plain sentence naming the cause and what to do, with the
//! technical detail kept after it. Without this the console showed only
//! "session/prompt failed: Internal error (code -32603)" for a rate limit, a
//! provider's 500 and a cut-off stream alike.

use agent_client_protocol::Error as RpcError;

/// How much of an error's `data` is kept (it can be a whole HTTP body).
const DATA_CHARS: usize = 400;

/// `message (code N): data`, the data as text (a JSON string unquoted), bounded.
pub(super) fn rpc_detail(e: &RpcError) -> String {
    let mut out = format!("{} (code {})", e.message, i32::from(e.code));
    let data = match &e.data {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    if let Some(d) = data.filter(|d| !d.trim().is_empty()) {
        out.push_str(": ");
        out.extend(d.chars().take(DATA_CHARS));
    }
    out
}

/// The learner's message for a failed `session/prompt` whose error reads `detail`.
pub(super) fn prompt_failed(detail: &str) -> String {
    format!("{} (session/prompt failed: {detail})", sentence(detail))
}

/// The learner's message for a prompt that got no answer within `secs`.
pub(super) fn no_answer(secs: u64) -> String {
    format!(
        "The mentor's model is not answering (timed out after {secs}s). Wait a moment, then send your message again. (session/prompt got no answer within {secs}s)"
    )
}

/// The one sentence for `detail`: the first cause it names, else a generic one.
fn sentence(detail: &str) -> &'static str {
    let d = detail.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| d.contains(w));
    if has(&[
        "429",
        "rate limit",
        "rate_limit",
        "ratelimit",
        "too many requests",
        "quota",
    ]) {
        "The mentor's model is rate-limited right now (too many requests). Wait a moment, then send your message again."
    } else if has(&["timed out", "timeout", "deadline", "idle"]) {
        "The mentor's model stopped answering (timed out). Wait a moment, then send your message again."
    } else if has(&[
        "stream",
        "disconnect",
        "connection",
        "incomplete",
        "truncat",
        "eof",
        "closed",
    ]) {
        "The mentor's reply was cut off (the model's stream ended early). Send your message again."
    } else if has(&[
        "500",
        "502",
        "503",
        "server error",
        "server_error",
        "internal server",
        "overloaded",
        "unavailable",
        "high demand",
    ]) {
        "The mentor's model provider had a server error. Send your message again; if it keeps failing, end the session and try later."
    } else {
        "The mentor's turn failed. Send your message again; if it keeps failing, end the session and try later."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_gets_its_sentence_and_the_detail_is_kept() {
        for (detail, want) in [
            (
                "Internal error (code -32603): exceeded retry limit, last status: 429 Too Many Requests",
                "rate-limited",
            ),
            (
                "Internal error (code -32603): rate_limit_exceeded",
                "rate-limited",
            ),
            (
                "Internal error (code -32603): unexpected status 500 Internal Server Error",
                "server error",
            ),
            (
                "Internal error (code -32603): stream disconnected before completion",
                "cut off",
            ),
            // codex-acp's words for a provider 500 (seen by the fault journey).
            (
                r#"Internal error (code -32603): {"message":"We're currently experiencing high demand, which may cause temporary errors.","codex_error_info":"internal_server_error"}"#,
                "server error",
            ),
            (
                "Internal error (code -32603): request timed out",
                "timed out",
            ),
            ("Internal error (code -32603)", "turn failed"),
        ] {
            let m = prompt_failed(detail);
            assert!(m.contains(want), "{detail} → {m}");
            assert!(
                m.contains("send your message again") || m.contains("Send your message again"),
                "{m}"
            );
            assert!(
                m.ends_with(&format!("(session/prompt failed: {detail})")),
                "{m}"
            );
        }
        assert!(no_answer(600).contains("timed out after 600s"));
    }

    #[test]
    fn the_detail_carries_the_data_bounded() {
        let mut e = RpcError::new(-32603, "Internal error");
        assert_eq!(rpc_detail(&e), "Internal error (code -32603)");
        e.data = Some(serde_json::json!("last status: 429"));
        assert_eq!(
            rpc_detail(&e),
            "Internal error (code -32603): last status: 429"
        );
        e.data = Some(serde_json::json!({"status": 500}));
        assert_eq!(
            rpc_detail(&e),
            "Internal error (code -32603): {\"status\":500}"
        );
        e.data = Some(serde_json::json!("x".repeat(5000)));
        assert_eq!(
            rpc_detail(&e).chars().count(),
            "Internal error (code -32603): ".len() + DATA_CHARS
        );
    }
}
