//! The answer in each protocol's wire shape: a JSON body, or the full list of
//! server-sent-event frames a streaming client expects (the order real vendors
//! send, including the final usage and terminal events).
//!
//! Pure: building frames is separate from sending them, so delays and injected
//! truncation (in `http`) apply the same way to every protocol.

use serde_json::{Value, json};

/// One generated answer.
#[derive(Debug, Clone)]
pub(crate) struct Answer<'a> {
    pub seq: u64,
    pub created: u64,
    pub model: &'a str,
    pub text: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Send no usage at all (a backend whose usage is unobservable).
    pub omit_usage: bool,
    /// Stream in uneven chunks like a real model ([`chunks`]) rather than
    /// about three words per event ([`deltas`]).
    pub realistic: bool,
}

impl Answer<'_> {
    fn pieces(&self) -> Vec<String> {
        if self.realistic {
            chunks(self.text, self.seq)
        } else {
            deltas(self.text)
        }
    }
}

/// The answer ready to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rendered {
    /// A complete `application/json` body.
    Json(Value),
    /// `text/event-stream` frames, each a complete `event:`/`data:` block.
    Events(Vec<String>),
}

/// Splits text into deltas of about three words, keeping the spaces, so the
/// concatenation of the deltas is exactly `text`.
pub(crate) fn deltas(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split(' ').collect();
    words
        .chunks(3)
        .enumerate()
        .map(|(i, chunk)| {
            let piece = chunk.join(" ");
            if i == 0 { piece } else { format!(" {piece}") }
        })
        .collect()
}

/// Splits text into uneven chunks of 1–12 characters (on character
/// boundaries), as a real model's tokens arrive: words, lines, Markdown
/// markers and multi-byte text are cut anywhere. Deterministic from `salt`;
/// the concatenation is exactly `text`.
pub(crate) fn chunks(text: &str, salt: u64) -> Vec<String> {
    // A 64-bit LCG (Knuth's MMIX constants): enough variety, no dependency.
    let mut state = salt.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let want = 1 + usize::try_from((state >> 33) % 12).unwrap_or(0);
        let cut = rest
            .char_indices()
            .nth(want)
            .map_or(rest.len(), |(at, _)| at);
        out.push(rest[..cut].to_owned());
        rest = &rest[cut..];
    }
    out
}

pub(super) fn frame(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// A Responses stream's events: each gets its `type` and the next
/// `sequence_number` (text and tool-call streams number them alike).
#[derive(Default)]
pub(super) struct Sequenced {
    seq: u64,
    pub(super) events: Vec<String>,
}

impl Sequenced {
    pub(super) fn push(&mut self, name: &str, mut data: Value) {
        data["type"] = json!(name);
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        self.events.push(frame(Some(name), &data));
    }
}

pub(super) fn strip_usage(body: &mut Value, omit: bool) {
    if let (true, Some(fields)) = (omit, body.as_object_mut()) {
        fields.remove("usage");
    }
}

/// OpenAI Chat Completions.
pub(crate) fn chat(a: &Answer<'_>, stream: bool) -> Rendered {
    let id = format!("chatcmpl-stub-{}", a.seq);
    let usage = json!({"prompt_tokens": a.input_tokens, "completion_tokens": a.output_tokens,
        "total_tokens": a.input_tokens + a.output_tokens});
    if !stream {
        let mut body = json!({"id": id, "object": "chat.completion", "created": a.created,
            "model": a.model, "choices": [{"index": 0, "message": {"role": "assistant", "content": a.text},
            "finish_reason": "stop", "logprobs": null}], "usage": usage});
        strip_usage(&mut body, a.omit_usage);
        return Rendered::Json(body);
    }
    let chunk = |choices: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": a.created, "model": a.model,
            "choices": choices})
    };
    let mut events = vec![frame(
        None,
        &chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
        ),
    )];
    for piece in a.pieces() {
        events.push(frame(
            None,
            &chunk(json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}])),
        ));
    }
    events.push(frame(
        None,
        &chunk(json!([{"index": 0, "delta": {}, "finish_reason": "stop"}])),
    ));
    // The `include_usage` chunk: empty choices plus usage; sent always, as clients
    // that did not ask for it ignore it.
    if !a.omit_usage {
        let mut last = chunk(json!([]));
        last["usage"] = usage;
        events.push(frame(None, &last));
    }
    events.push("data: [DONE]\n\n".to_owned());
    Rendered::Events(events)
}

/// OpenAI Responses.
pub(crate) fn responses(a: &Answer<'_>, stream: bool) -> Rendered {
    let response_id = format!("resp_stub_{}", a.seq);
    let item_id = format!("msg_stub_{}", a.seq);
    let usage = json!({"input_tokens": a.input_tokens, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": a.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": a.input_tokens + a.output_tokens});
    let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
    let item = |status: &str, content: Value| json!({"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content});
    let done_item = item("completed", json!([part(a.text)]));
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": response_id, "object": "response", "created_at": a.created, "status": status,
            "model": a.model, "output": output, "usage": usage})
    };
    let usage = if a.omit_usage { Value::Null } else { usage };
    let completed = response("completed", json!([done_item]), usage);
    if !stream {
        return Rendered::Json(completed);
    }
    let in_progress = response("in_progress", json!([]), Value::Null);
    let mut out = Sequenced::default();
    let mut push = |name: &str, data: Value| out.push(name, data);
    push("response.created", json!({"response": in_progress}));
    push("response.in_progress", json!({"response": in_progress}));
    push(
        "response.output_item.added",
        json!({"output_index": 0, "item": item("in_progress", json!([]))}),
    );
    let at = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
    let with = |extra: Value| {
        let mut v = at.clone();
        if let (Some(base), Some(more)) = (v.as_object_mut(), extra.as_object()) {
            base.extend(more.clone());
        }
        v
    };
    push(
        "response.content_part.added",
        with(json!({"part": part("")})),
    );
    for piece in a.pieces() {
        push("response.output_text.delta", with(json!({"delta": piece})));
    }
    push("response.output_text.done", with(json!({"text": a.text})));
    push(
        "response.content_part.done",
        with(json!({"part": part(a.text)})),
    );
    push(
        "response.output_item.done",
        json!({"output_index": 0, "item": done_item}),
    );
    push("response.completed", json!({"response": completed}));
    Rendered::Events(out.events)
}

/// Anthropic Messages.
pub(crate) fn messages(a: &Answer<'_>, stream: bool) -> Rendered {
    let id = format!("msg_stub_{}", a.seq);
    let usage = |output: u64| {
        json!({"input_tokens": a.input_tokens, "output_tokens": output,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    };
    if !stream {
        let mut body = json!({"id": id, "type": "message", "role": "assistant", "model": a.model,
            "content": [{"type": "text", "text": a.text}], "stop_reason": "end_turn",
            "stop_sequence": null, "usage": usage(a.output_tokens)});
        strip_usage(&mut body, a.omit_usage);
        return Rendered::Json(body);
    }
    let mut start = json!({"type": "message_start", "message": {"id": id,
        "type": "message", "role": "assistant", "model": a.model, "content": [],
        "stop_reason": null, "stop_sequence": null, "usage": usage(0)}});
    if let Some(message) = start.get_mut("message") {
        strip_usage(message, a.omit_usage);
    }
    let mut events = vec![
        frame(Some("message_start"), &start),
        frame(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        frame(Some("ping"), &json!({"type": "ping"})),
    ];
    for piece in a.pieces() {
        events.push(frame(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta",
            "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    messages_end(events, a, "end_turn")
}

/// The end of an Anthropic stream, text or tool call alike: the block's stop, the
/// message delta with `stop_reason` and the usage, and the message stop.
pub(super) fn messages_end(mut events: Vec<String>, a: &Answer<'_>, stop_reason: &str) -> Rendered {
    events.push(frame(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": 0}),
    ));
    let mut delta = json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"input_tokens": a.input_tokens, "output_tokens": a.output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}});
    strip_usage(&mut delta, a.omit_usage);
    events.push(frame(Some("message_delta"), &delta));
    events.push(frame(
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    ));
    Rendered::Events(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Answer<'static> {
        Answer {
            seq: 3,
            created: 1,
            model: "m",
            text: "one two three four five",
            input_tokens: 7,
            output_tokens: 5,
            omit_usage: false,
            realistic: false,
        }
    }

    fn datas(r: Rendered) -> Vec<String> {
        let Rendered::Events(events) = r else {
            panic!("expected events")
        };
        events
            .iter()
            .map(|e| {
                e.lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn deltas_reassemble_exactly() {
        for text in [
            "",
            "a",
            "one two three four",
            "x  y",
            "MENTOR-REPLY 1 abcd: hi",
        ] {
            assert_eq!(deltas(text).concat(), text);
        }
    }

    #[test]
    fn chunks_reassemble_exactly_and_vary_in_size() {
        let text = crate::realistic::realistic_reply(4, 2, Some("a b"), Some("owl"));
        for salt in 0..50 {
            let pieces = chunks(&text, salt);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().all(|p| (1..=12).contains(&p.chars().count())));
        }
        let sizes: std::collections::BTreeSet<usize> =
            chunks(&text, 1).iter().map(|p| p.chars().count()).collect();
        assert!(sizes.len() > 5, "{sizes:?}");
        assert!(chunks("", 3).is_empty());
        assert_eq!(chunks("→界é", 9).concat(), "→界é");
    }

    #[test]
    fn chat_stream_ends_with_usage_chunk_then_done() {
        let data = datas(chat(&answer(), true));
        assert_eq!(data.last().unwrap(), "[DONE]");
        let usage: Value = serde_json::from_str(&data[data.len() - 2]).unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["completion_tokens"], 5);
        let text: String = data[1..data.len() - 3]
            .iter()
            .map(|d| {
                serde_json::from_str::<Value>(d).unwrap()["choices"][0]["delta"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(text, "one two three four five");
    }

    #[test]
    fn responses_stream_has_the_full_sequence() {
        let data = datas(responses(&answer(), true));
        let kinds: Vec<String> = data
            .iter()
            .map(|d| {
                serde_json::from_str::<Value>(d).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let done: Value = serde_json::from_str(data.last().unwrap()).unwrap();
        assert_eq!(done["sequence_number"], 9);
        assert_eq!(done["response"]["usage"]["output_tokens"], 5);
    }

    #[test]
    fn messages_stream_reports_usage_in_message_delta() {
        let data = datas(messages(&answer(), true));
        let delta: Value = serde_json::from_str(&data[data.len() - 2]).unwrap();
        assert_eq!(delta["usage"]["output_tokens"], 5);
        assert_eq!(delta["delta"]["stop_reason"], "end_turn");
        let Rendered::Json(body) = messages(&answer(), false) else {
            panic!()
        };
        assert_eq!(body["content"][0]["text"], "one two three four five");
        assert_eq!(body["usage"]["input_tokens"], 7);
    }

    #[test]
    fn omitted_usage_leaves_no_usage_anywhere() {
        let a = Answer {
            omit_usage: true,
            ..answer()
        };
        for r in [
            chat(&a, true),
            chat(&a, false),
            responses(&a, false),
            messages(&a, true),
            messages(&a, false),
        ] {
            let text = match r {
                Rendered::Json(v) => v.to_string(),
                Rendered::Events(e) => e.concat(),
            };
            assert!(!text.contains("_tokens"), "{text}");
        }
    }
}
