//! A scripted tool call (`crate::tool_script`) in each protocol's native shape, as
//! a JSON body or the SSE frames a streaming client expects:
//! Chat Completions `tool_calls` (arguments streamed as string pieces,
//! `finish_reason: tool_calls`), Responses `function_call` (with
//! `response.function_call_arguments.delta`/`.done`), Anthropic `tool_use`
//! (`input_json_delta` pieces, `stop_reason: tool_use`).
//!
//! Pure, like `render`: the frames are built here and sent by `body::send`.

use serde_json::{Value, json};

use super::render::{Answer, Rendered, Sequenced, deltas, frame, messages_end, strip_usage};
use super::request::NAMESPACE_SEPARATOR;

/// The call to render: the offered tool's full name and its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Call<'a> {
    pub name: &'a str,
    pub arguments: &'a Value,
    /// The tool was offered inside a Responses `namespace` entry.
    pub namespaced: bool,
}

impl Call<'_> {
    /// The arguments as the JSON string OpenAI protocols carry.
    pub(crate) fn arguments_text(&self) -> String {
        self.arguments.to_string()
    }

    /// The call id for request `seq` (OpenAI `call_…`, Anthropic `toolu_…`).
    pub(crate) fn id(seq: u64, anthropic: bool) -> String {
        if anthropic {
            format!("toolu_stub_{seq}")
        } else {
            format!("call_stub_{seq}")
        }
    }
}

/// The argument string in pieces (about three words each), so clients
/// reassemble streamed arguments as they must with a real model.
fn pieces(text: &str) -> Vec<String> {
    let out = deltas(text);
    if out.is_empty() {
        vec![String::new()]
    } else {
        out
    }
}

/// OpenAI Chat Completions: `message.tool_calls`.
pub(crate) fn chat(a: &Answer<'_>, call: &Call<'_>, stream: bool) -> Rendered {
    let id = format!("chatcmpl-stub-{}", a.seq);
    let call_id = Call::id(a.seq, false);
    let args = call.arguments_text();
    let usage = json!({"prompt_tokens": a.input_tokens, "completion_tokens": a.output_tokens,
        "total_tokens": a.input_tokens + a.output_tokens});
    if !stream {
        let mut body = json!({"id": id, "object": "chat.completion", "created": a.created,
            "model": a.model, "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": call_id, "type": "function",
                "function": {"name": call.name, "arguments": args}}]},
            "finish_reason": "tool_calls", "logprobs": null}], "usage": usage});
        strip_usage(&mut body, a.omit_usage);
        return Rendered::Json(body);
    }
    let chunk = |delta: Value, finish: Value| {
        frame(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "created": a.created,
                "model": a.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": call_id,
            "type": "function", "function": {"name": call.name, "arguments": ""}}]}),
        Value::Null,
    )];
    for piece in pieces(&args) {
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            Value::Null,
        ));
    }
    events.push(chunk(json!({}), json!("tool_calls")));
    if !a.omit_usage {
        events.push(frame(
            None,
            &json!({"id": id, "object": "chat.completion.chunk", "created": a.created,
                "model": a.model, "choices": [], "usage": usage}),
        ));
    }
    events.push("data: [DONE]\n\n".to_owned());
    Rendered::Events(events)
}

/// OpenAI Responses: a `function_call` output item.
pub(crate) fn responses(a: &Answer<'_>, call: &Call<'_>, stream: bool) -> Rendered {
    let response_id = format!("resp_stub_{}", a.seq);
    let item_id = format!("fc_stub_{}", a.seq);
    let call_id = Call::id(a.seq, false);
    let args = call.arguments_text();
    let usage = if a.omit_usage {
        Value::Null
    } else {
        json!({"input_tokens": a.input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": a.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": a.input_tokens + a.output_tokens})
    };
    // A tool offered inside a `namespace` entry is called by its own name
    // plus the namespace (codex routes `mcp__studyloop` + `log_topic`).
    let (namespace, name) = match call.namespaced {
        true => call
            .name
            .rsplit_once(NAMESPACE_SEPARATOR)
            .map_or((None, call.name), |(ns, n)| (Some(ns), n)),
        false => (None, call.name),
    };
    let item = |status: &str, arguments: &str| {
        let mut item = json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status});
        if let Some(ns) = namespace {
            item["namespace"] = json!(ns);
        }
        item
    };
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": response_id, "object": "response", "created_at": a.created, "status": status,
            "model": a.model, "output": output, "usage": usage})
    };
    let completed = response("completed", json!([item("completed", &args)]), usage);
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
        json!({"output_index": 0, "item": item("in_progress", "")}),
    );
    for piece in pieces(&args) {
        push(
            "response.function_call_arguments.delta",
            json!({"item_id": item_id, "output_index": 0, "delta": piece}),
        );
    }
    push(
        "response.function_call_arguments.done",
        json!({"item_id": item_id, "output_index": 0, "arguments": args}),
    );
    push(
        "response.output_item.done",
        json!({"output_index": 0, "item": item("completed", &args)}),
    );
    push("response.completed", json!({"response": completed}));
    Rendered::Events(out.events)
}

/// Anthropic Messages: a `tool_use` content block.
pub(crate) fn messages(a: &Answer<'_>, call: &Call<'_>, stream: bool) -> Rendered {
    let id = format!("msg_stub_{}", a.seq);
    let call_id = Call::id(a.seq, true);
    let usage = |output: u64| {
        json!({"input_tokens": a.input_tokens, "output_tokens": output,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    };
    if !stream {
        let mut body = json!({"id": id, "type": "message", "role": "assistant", "model": a.model,
            "content": [{"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments}],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": usage(a.output_tokens)});
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
            "content_block": {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}}),
        ),
        frame(Some("ping"), &json!({"type": "ping"})),
    ];
    for piece in pieces(&call.arguments_text()) {
        events.push(frame(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    messages_end(events, a, "tool_use")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Answer<'static> {
        Answer {
            seq: 4,
            created: 1,
            model: "m",
            text: "",
            input_tokens: 7,
            output_tokens: 3,
            omit_usage: false,
            realistic: false,
        }
    }

    fn datas(r: Rendered) -> Vec<Value> {
        let Rendered::Events(events) = r else {
            panic!("expected events")
        };
        events
            .iter()
            .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    fn args() -> Value {
        json!({"topic": "window functions over partitions", "status": "done", "note": "ok"})
    }

    #[test]
    fn chat_streams_arguments_that_reassemble_and_finish_with_tool_calls() {
        let arguments = args();
        let call = Call {
            name: "studyloop_log_topic",
            arguments: &arguments,
            namespaced: false,
        };
        let data = datas(chat(&answer(), &call, true));
        let first = &data[0]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(
            (first["id"].as_str(), first["function"]["name"].as_str()),
            (Some("call_stub_4"), Some("studyloop_log_topic"))
        );
        let joined: String = data
            .iter()
            .filter_map(|d| d.pointer("/choices/0/delta/tool_calls/0/function/arguments"))
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
        assert!(
            data.iter()
                .any(|d| d["choices"][0]["finish_reason"] == "tool_calls")
        );
        let Rendered::Json(body) = chat(&answer(), &call, false) else {
            panic!()
        };
        let tc = &body["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(tc["type"], "function");
        assert_eq!(
            serde_json::from_str::<Value>(tc["function"]["arguments"].as_str().unwrap()).unwrap(),
            arguments
        );
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    }

    /// Codex groups MCP tools in a namespace entry and refuses a call that
    /// names the tool alone ("unsupported call: log_topic", found by the study
    /// arc): the call carries the namespace apart from the name.
    #[test]
    fn a_namespaced_tool_is_called_with_its_namespace() {
        let arguments = args();
        let call = Call {
            name: "mcp__studyloop__log_topic",
            arguments: &arguments,
            namespaced: true,
        };
        let Rendered::Json(body) = responses(&answer(), &call, false) else {
            panic!("not streamed");
        };
        let item = &body["output"][0];
        assert_eq!(
            (item["namespace"].as_str(), item["name"].as_str()),
            (Some("mcp__studyloop"), Some("log_topic"))
        );
        let call = Call {
            name: "mcp__studyloop__log_topic",
            arguments: &arguments,
            namespaced: false,
        };
        let Rendered::Json(body) = responses(&answer(), &call, false) else {
            panic!("not streamed");
        };
        assert!(body["output"][0].get("namespace").is_none());
        assert_eq!(body["output"][0]["name"], "mcp__studyloop__log_topic");
    }

    #[test]
    fn responses_has_the_function_call_sequence() {
        let arguments = args();
        let call = Call {
            name: "mcp__studyloop__log_topic",
            arguments: &arguments,
            namespaced: true,
        };
        let data = datas(responses(&answer(), &call, true));
        let kinds: Vec<&str> = data.iter().filter_map(|d| d["type"].as_str()).collect();
        assert_eq!(
            kinds[..3],
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added"
            ]
        );
        assert_eq!(
            kinds[kinds.len() - 3..],
            [
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let done = data.last().unwrap();
        let item = &done["response"]["output"][0];
        assert_eq!(
            (item["type"].as_str(), item["call_id"].as_str()),
            (Some("function_call"), Some("call_stub_4"))
        );
        let joined: String = data
            .iter()
            .filter(|d| d["type"] == "response.function_call_arguments.delta")
            .filter_map(|d| d["delta"].as_str())
            .collect();
        assert_eq!(joined, item["arguments"].as_str().unwrap());
    }

    #[test]
    fn messages_sends_tool_use_with_input_json_deltas() {
        let arguments = args();
        let call = Call {
            name: "mcp__studyloop__log_topic",
            arguments: &arguments,
            namespaced: false,
        };
        let data = datas(messages(&answer(), &call, true));
        assert_eq!(data[1]["content_block"]["type"], "tool_use");
        assert_eq!(data[1]["content_block"]["id"], "toolu_stub_4");
        let joined: String = data
            .iter()
            .filter_map(|d| d.pointer("/delta/partial_json"))
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
        assert_eq!(data[data.len() - 2]["delta"]["stop_reason"], "tool_use");
        let Rendered::Json(body) = messages(&answer(), &call, false) else {
            panic!()
        };
        assert_eq!(body["content"][0]["input"], arguments);
        assert_eq!(body["stop_reason"], "tool_use");
    }
}
