//! Scripted tool calls (`--tool-script`) over real loopback HTTP: each
//! protocol's native call shape, streaming and not; the tool picked from the
//! request's own `tools` by suffix; the follow-up carrying the result answered
//! with text; every call and result in the request log.

use serde_json::{Value, json};

use super::provider::{post, request, start, streamed_text};

const SCRIPT: &str = r#"[{"trigger":"log the topic","tool":"log_topic",
  "arguments":{"topic":"window functions","status":"done","note":"<b>x</b>; rm -rf /"}}]"#;

fn args() -> Value {
    json!({"topic":"window functions","status":"done","note":"<b>x</b>; rm -rf /"})
}

/// The streamed arguments of an SSE tool call, whatever the protocol.
fn streamed_arguments(sse: &str) -> String {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|d| {
            d.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                .and_then(Value::as_str)
                .or_else(|| {
                    (d["type"] == "response.function_call_arguments.delta")
                        .then(|| d["delta"].as_str())
                        .flatten()
                })
                .or_else(|| d.pointer("/delta/partial_json").and_then(Value::as_str))
                .map(str::to_owned)
        })
        .collect()
}

/// One protocol: the first request (user asks, tools offered), then the
/// follow-up carrying the tool result.
struct Case {
    path: &'static str,
    tool_name: &'static str,
    first: Value,
    follow_up: Value,
}

fn cases(stream: bool) -> Vec<Case> {
    let user = "please log the topic for me";
    vec![
        Case {
            path: "/v1/chat/completions",
            tool_name: "studyloop_log_topic",
            first: json!({"model":"m","stream":stream,
                "tools":[{"type":"function","function":{"name":"bash"}},
                         {"type":"function","function":{"name":"studyloop_log_topic"}}],
                "messages":[{"role":"user","content":user}]}),
            follow_up: json!({"model":"m","stream":stream,
                "tools":[{"type":"function","function":{"name":"studyloop_log_topic"}}],
                "messages":[{"role":"user","content":user},
                    {"role":"assistant","content":null,"tool_calls":[{"id":"call_stub_1","type":"function",
                        "function":{"name":"studyloop_log_topic","arguments":"{}"}}]},
                    {"role":"tool","tool_call_id":"call_stub_1","content":"{\"logged\":true}"}]}),
        },
        Case {
            path: "/v1/responses",
            tool_name: "mcp__studyloop__log_topic",
            first: json!({"model":"gpt-5","stream":stream,
                "tools":[{"type":"function","name":"shell"},{"type":"function","name":"mcp__studyloop__log_topic"}],
                "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":user}]}]}),
            follow_up: json!({"model":"gpt-5","stream":stream,
                "tools":[{"type":"function","name":"mcp__studyloop__log_topic"}],
                "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":user}]},
                    {"type":"function_call","call_id":"call_stub_1","name":"mcp__studyloop__log_topic","arguments":"{}"},
                    {"type":"function_call_output","call_id":"call_stub_1","output":"{\"logged\":true}"}]}),
        },
        Case {
            path: "/v1/messages",
            tool_name: "mcp__studyloop__log_topic",
            first: json!({"model":"c","max_tokens":99,"stream":stream,
                "tools":[{"name":"Bash","input_schema":{}},{"name":"mcp__studyloop__log_topic","input_schema":{}}],
                "messages":[{"role":"user","content":[{"type":"text","text":user}]}]}),
            follow_up: json!({"model":"c","max_tokens":99,"stream":stream,
                "tools":[{"name":"mcp__studyloop__log_topic","input_schema":{}}],
                "messages":[{"role":"user","content":[{"type":"text","text":user}]},
                    {"role":"assistant","content":[{"type":"tool_use","id":"toolu_stub_1","name":"mcp__studyloop__log_topic","input":{}}]},
                    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_stub_1",
                        "content":[{"type":"text","text":"{\"logged\":true}"}]}]}]}),
        },
    ]
}

/// The call in a non-streamed body: (name, id, arguments as JSON).
fn json_call(body: &Value) -> (String, String, Value) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    if let Some(tc) = body.pointer("/choices/0/message/tool_calls/0") {
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        let a = serde_json::from_str(tc["function"]["arguments"].as_str().unwrap()).unwrap();
        return (s(&tc["function"]["name"]), s(&tc["id"]), a);
    }
    if let Some(item) = body
        .pointer("/output/0")
        .filter(|i| i["type"] == "function_call")
    {
        let a = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
        return (s(&item["name"]), s(&item["call_id"]), a);
    }
    let block = &body["content"][0];
    assert_eq!(
        (block["type"].as_str(), body["stop_reason"].as_str()),
        (Some("tool_use"), Some("tool_use")),
        "{body}"
    );
    (s(&block["name"]), s(&block["id"]), block["input"].clone())
}

#[test]
fn each_protocol_calls_the_offered_tool_then_answers_the_result_with_text() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("tools.json");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut stub = start(
        dir.path(),
        &["--seed", "3", "--tool-script", script.to_str().unwrap()],
    );
    let port = stub.port();
    let headers = [("anthropic-version", "2023-06-01")];
    let mut expected_calls = Vec::new();
    for stream in [false, true] {
        for case in cases(stream) {
            let what = format!("{} stream={stream}", case.path);
            if stream {
                let (status, sse) =
                    request(port, "POST", case.path, &headers, &case.first.to_string()).unwrap();
                assert_eq!(status, 200, "{what}");
                assert!(sse.contains(case.tool_name), "{what}: {sse}");
                let joined = streamed_arguments(&sse);
                assert_eq!(
                    serde_json::from_str::<Value>(&joined).unwrap(),
                    args(),
                    "{what}"
                );
                assert_eq!(streamed_text(&sse), "", "{what}: a call carries no text");
                let (_, sse) = request(
                    port,
                    "POST",
                    case.path,
                    &headers,
                    &case.follow_up.to_string(),
                )
                .unwrap();
                assert!(
                    streamed_text(&sse).starts_with("MENTOR-REPLY 1 "),
                    "{what}: {sse}"
                );
                assert_eq!(streamed_arguments(&sse), "", "{what}: no second call");
            } else {
                let (status, body) = post(port, case.path, &case.first);
                assert_eq!(status, 200, "{what}: {body}");
                let (name, id, arguments) = json_call(&body);
                assert_eq!(
                    (name.as_str(), arguments),
                    (case.tool_name, args()),
                    "{what}"
                );
                assert!(
                    id.starts_with("call_stub_") || id.starts_with("toolu_stub_"),
                    "{id}"
                );
                let (_, body) = post(port, case.path, &case.follow_up);
                let text = body
                    .pointer("/choices/0/message/content")
                    .or_else(|| body.pointer("/output/0/content/0/text"))
                    .or_else(|| body.pointer("/content/0/text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                assert!(text.starts_with("MENTOR-REPLY 1 "), "{what}: {body}");
            }
            expected_calls.push(case.tool_name);
        }
    }
    stub.stop().unwrap();
    let records = stub.records().unwrap();
    assert_eq!(records.len(), 12);
    let calls: Vec<&str> = records
        .iter()
        .filter_map(|r| r.tool_call.as_ref().map(|c| c.name.as_str()))
        .collect();
    assert_eq!(calls, expected_calls);
    for pair in records.chunks(2) {
        let call = pair[0]
            .tool_call
            .as_ref()
            .expect("first of each pair calls");
        assert_eq!(
            serde_json::from_str::<Value>(&call.arguments).unwrap(),
            args()
        );
        assert_eq!(pair[0].reply, None);
        assert_eq!(pair[1].tool_call, None);
        assert_eq!(pair[1].tool_result.as_deref(), Some("{\"logged\":true}"));
        assert!(
            pair[1]
                .reply
                .as_deref()
                .is_some_and(|r| r.starts_with("MENTOR-REPLY"))
        );
    }
}

#[test]
fn an_unoffered_tool_or_an_untriggered_turn_gets_text_and_the_log_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("tools.json");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut stub = start(dir.path(), &["--tool-script", script.to_str().unwrap()]);
    let port = stub.port();
    let (_, body) = post(
        port,
        "/v1/chat/completions",
        &json!({"model":"m","tools":[{"type":"function","function":{"name":"log_topics_x"}}],
            "messages":[{"role":"user","content":"log the topic"}]}),
    );
    assert!(
        body["choices"][0]["message"]["tool_calls"].is_null(),
        "{body}"
    );
    let (_, body) = post(
        port,
        "/v1/chat/completions",
        &json!({"model":"m","tools":[{"type":"function","function":{"name":"log_topic"}}],
            "messages":[{"role":"user","content":"just chatting"}]}),
    );
    assert!(
        body["choices"][0]["message"]["tool_calls"].is_null(),
        "{body}"
    );
    stub.stop().unwrap();
    let records = stub.records().unwrap();
    let note = records[0].tool_note.as_deref().unwrap_or_default();
    assert!(
        note.contains("`log_topic`") && note.contains("log_topics_x"),
        "{note}"
    );
    assert_eq!(records[1].tool_note, None);
    assert!(records.iter().all(|r| r.tool_call.is_none()));
}

#[test]
fn a_bad_tool_script_fails_the_start_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("tools.json");
    std::fs::write(
        &script,
        r#"[{"trigger":"x","tool":"t","arguments":"nope"}]"#,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_studyloop-stub-provider"))
        .args(["--tool-script", script.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tools.json") && stderr.contains("must be a JSON object"),
        "{stderr}"
    );
}
