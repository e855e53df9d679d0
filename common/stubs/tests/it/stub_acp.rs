//! Drives the real `studyloop-stub-acp` binary over pipes and checks each knob
//! does what its documentation says.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Agent {
    fn start(knobs: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_studyloop-stub-acp"));
        cmd.env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in knobs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn stub");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}").expect("write frame");
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn read(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line).expect("read") {
            0 => None,
            _ => Some(serde_json::from_str(&line).expect("stub writes JSON")),
        }
    }

    /// Reads frames until the response with `id`, returning (frames before, response).
    fn until_response(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut seen = Vec::new();
        while let Some(frame) = self.read() {
            if frame.get("method").is_none() && frame["id"] == json!(id) {
                return (seen, frame);
            }
            seen.push(frame);
        }
        panic!("agent closed before response {id}; saw {seen:?}");
    }

    fn handshake(&mut self) {
        self.request(1, "initialize", json!({"protocolVersion": 1}));
        let (_, init) = self.until_response(1);
        assert_eq!(init["result"]["protocolVersion"], json!(1));
        self.request(2, "session/new", json!({"cwd": "/", "mcpServers": []}));
        let (_, new) = self.until_response(2);
        assert_eq!(new["result"]["sessionId"], json!("stub-session-1"));
    }

    fn prompt(&mut self, id: u64, text: &str) {
        let prompt = json!([{"type": "text", "text": text}]);
        self.request(
            id,
            "session/prompt",
            json!({"sessionId": "stub-session-1", "prompt": prompt}),
        );
    }

    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().expect("wait").code().unwrap_or(-1)
    }
}

fn chunk_texts(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|f| {
            f["params"]["update"]["content"]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn echo_mode_names_the_prompt_and_counts_turns() {
    let mut a = Agent::start(&[]);
    a.handshake();
    a.prompt(3, "hello");
    let (frames, res) = a.until_response(3);
    assert_eq!(chunk_texts(&frames), ["STUB-ACP-ECHO 1: hello"]);
    assert_eq!(res["result"]["stopReason"], "end_turn");
    a.prompt(4, "again");
    let (frames, _) = a.until_response(4);
    assert_eq!(chunk_texts(&frames), ["STUB-ACP-ECHO 2: again"]);
    assert_eq!(a.finish(), 0, "stdin EOF ends the stub cleanly");
}

#[test]
fn prompt_sequence_last_list_repeats_and_stop_reason_applies() {
    let seq = r#"[[{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"one"}}],
                 [{"sessionUpdate":"plan","entries":[]}]]"#;
    let mut a = Agent::start(&[
        ("STUB_ACP_PROMPT_UPDATES_SEQ", seq),
        ("STUB_ACP_PROMPT_STOP_REASON", "max_tokens"),
    ]);
    a.handshake();
    let mut kinds = Vec::new();
    for id in 3..6 {
        a.prompt(id, "x");
        let (frames, res) = a.until_response(id);
        assert_eq!(res["result"]["stopReason"], "max_tokens");
        kinds.push(frames[0]["params"]["update"]["sessionUpdate"].clone());
    }
    assert_eq!(
        kinds,
        [json!("agent_message_chunk"), json!("plan"), json!("plan")]
    );
}

#[test]
fn prompt_error_is_a_json_rpc_error() {
    let mut a = Agent::start(&[(
        "STUB_ACP_PROMPT_ERROR",
        r#"{"code":-32000,"message":"quota"}"#,
    )]);
    a.handshake();
    a.prompt(3, "x");
    let (_, res) = a.until_response(3);
    assert_eq!(res["error"], json!({"code": -32000, "message": "quota"}));
}

#[test]
fn crash_after_init_exits_17() {
    let mut a = Agent::start(&[("STUB_ACP_CRASH_AFTER_INIT", "1")]);
    a.request(1, "initialize", json!({"protocolVersion": 1}));
    let (_, init) = a.until_response(1);
    assert!(init.get("result").is_some());
    assert_eq!(a.read(), None, "no more frames after the crash");
    assert_eq!(a.finish(), 17);
}

#[test]
fn permission_request_waits_for_the_clients_answer() {
    let mut a = Agent::start(&[("STUB_ACP_EMIT_PERMISSION_REQUEST", "1")]);
    a.handshake();
    a.prompt(3, "x");
    let req = a.read().expect("permission request");
    assert_eq!(req["method"], "session/request_permission");
    assert_eq!(req["params"]["toolCall"]["toolCallId"], "tc-99");
    let ids: Vec<_> = req["params"]["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| o["optionId"].clone())
        .collect();
    assert_eq!(ids, [json!("opt-allow"), json!("opt-deny")]);
    let outcome = json!({"outcome": {"outcome": "selected", "optionId": "opt-deny"}});
    a.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": outcome}));
    let (frames, res) = a.until_response(3);
    assert_eq!(chunk_texts(&frames)[0], "permission: selected opt-deny");
    assert_eq!(res["result"]["stopReason"], "end_turn");
}

#[test]
fn fs_round_trip_reports_what_the_client_did() {
    let mut a = Agent::start(&[("STUB_ACP_FS_PATH", "/s/notes.txt")]);
    a.handshake();
    a.prompt(3, "x");
    let write = a.read().expect("write request");
    assert_eq!(write["method"], "fs/write_text_file");
    assert_eq!(write["params"]["path"], "/s/notes.txt");
    let content = write["params"]["content"].clone();
    a.send(&json!({"jsonrpc": "2.0", "id": write["id"], "result": null}));
    let read = a.read().expect("read request");
    assert_eq!(read["method"], "fs/read_text_file");
    a.send(&json!({"jsonrpc": "2.0", "id": read["id"], "result": {"content": content}}));
    let (frames, _) = a.until_response(3);
    assert_eq!(
        chunk_texts(&frames)[0],
        "fs: wrote and read back the same text"
    );
}

#[test]
fn cancel_ends_a_waiting_prompt_and_can_exit() {
    let mut a = Agent::start(&[
        ("STUB_ACP_PROMPT_WAIT_FOR_CANCEL", "1"),
        ("STUB_ACP_EXIT_ON_CANCEL", "1"),
        ("STUB_ACP_PROMPT_UPDATES", "[]"),
    ]);
    a.handshake();
    a.prompt(3, "x");
    a.send(&json!({"jsonrpc": "2.0", "method": "session/cancel",
                   "params": {"sessionId": "stub-session-1"}}));
    let (_, res) = a.until_response(3);
    assert_eq!(res["result"]["stopReason"], "cancelled");
    assert_eq!(a.read(), None);
    assert_eq!(a.finish(), 0);
}

#[test]
fn unknown_method_and_bad_params_get_standard_errors() {
    let mut a = Agent::start(&[]);
    a.request(1, "session/load", json!({}));
    assert_eq!(a.until_response(1).1["error"]["code"], -32601);
    a.request(2, "session/new", json!({"cwd": "relative"}));
    assert_eq!(a.until_response(2).1["error"]["code"], -32602);
}

#[test]
fn raw_lines_and_pre_init_frames_are_written_verbatim() {
    let mut a = Agent::start(&[
        (
            "STUB_ACP_PRE_INIT_NOTIFS",
            r#"[{"jsonrpc":"2.0","method":"_kiro.dev/hello"}]"#,
        ),
        ("STUB_ACP_PROMPT_RAW_LINES", r#"["{\"not\": json"]"#),
    ]);
    assert_eq!(a.read().expect("pre-init")["method"], "_kiro.dev/hello");
    a.handshake();
    a.prompt(3, "x");
    let mut line = String::new();
    a.stdout.read_line(&mut line).expect("raw line");
    assert_eq!(line.trim_end(), "{\"not\": json");
}

#[test]
fn malformed_knob_is_a_clear_error_and_non_zero_exit() {
    let out = Command::new(env!("CARGO_BIN_EXE_studyloop-stub-acp"))
        .env_clear()
        .env("STUB_ACP_INIT_RESULT", "[1]")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("STUB_ACP_INIT_RESULT") && err.contains("JSON object"),
        "{err}"
    );
}
