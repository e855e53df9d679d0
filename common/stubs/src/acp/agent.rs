//! The scripted agent loop of `studyloop-stub-acp`: NDJSON JSON-RPC 2.0 over a
//! reader and a writer (stdin/stdout in the binary, pipes in tests).
//!
//! It plays the agent side of ACP just far enough to test a client: initialize,
//! session/new, session/prompt (with scripted updates, errors, permission and fs
//! round trips), session/cancel. It is a test double, not an agent: it never
//! calls a model. Everything it does is decided by [`Knobs`].

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};

use super::knobs::{Knobs, session_update};

/// Exit status after `STUB_ACP_CRASH_AFTER_INIT`.
pub const CRASH_EXIT_CODE: i32 = 17;

/// One thing read from the client.
enum Inbound {
    Frame(Value),
    Malformed(String),
    Eof,
}

/// Why the loop stopped, as a process exit status.
struct Exit(i32);

/// Runs the agent until stdin closes or a knob says to exit; returns the exit status.
pub fn run(knobs: &Knobs, input: impl Read + Send + 'static, output: impl Write) -> i32 {
    let rx = spawn_reader(input, knobs.log.clone());
    let mut agent = Agent {
        knobs,
        out: output,
        rx,
        backlog: VecDeque::new(),
        session_id: None,
        prompts: 0,
        next_id: 0,
        cancelled: false,
    };
    match agent.serve() {
        Ok(()) => 0,
        Err(Exit(code)) => code,
    }
}

/// Reads lines on a thread so the agent can watch for `session/cancel` while a
/// prompt is in progress.
fn spawn_reader(input: impl Read + Send + 'static, log: Option<String>) -> Receiver<Inbound> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut log = log.and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        });
        for line in BufReader::new(input).lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            if let Some(f) = log.as_mut() {
                // Best effort: the log is a debugging aid, never a reason to stop.
                let _ = writeln!(f, "{line}");
            }
            let item = serde_json::from_str(&line).map_or(Inbound::Malformed(line), Inbound::Frame);
            if tx.send(item).is_err() {
                return;
            }
        }
        let _ = tx.send(Inbound::Eof);
    });
    rx
}

struct Agent<'k, W: Write> {
    knobs: &'k Knobs,
    out: W,
    rx: Receiver<Inbound>,
    /// Frames that arrived while a prompt was waiting for something else.
    backlog: VecDeque<Inbound>,
    session_id: Option<String>,
    prompts: usize,
    next_id: u64,
    cancelled: bool,
}

impl<W: Write> Agent<'_, W> {
    fn serve(&mut self) -> Result<(), Exit> {
        for frame in self.knobs.pre_init_notifs.clone() {
            self.send(&frame)?;
        }
        loop {
            let item = match self.backlog.pop_front() {
                Some(item) => item,
                None => self.rx.recv().unwrap_or(Inbound::Eof),
            };
            match item {
                Inbound::Eof => return Ok(()),
                Inbound::Malformed(line) => self.reply_parse_error(&line)?,
                Inbound::Frame(frame) => self.dispatch(&frame)?,
            }
        }
    }

    fn dispatch(&mut self, frame: &Value) -> Result<(), Exit> {
        let method = frame.get("method").and_then(Value::as_str);
        let id = frame.get("id").cloned();
        match (method, id) {
            (Some("session/cancel"), None) if self.knobs.exit_on_cancel => Err(Exit(0)),
            (Some(_), None) | (None, _) => Ok(()), // notifications and stray responses
            (Some(method), Some(id)) => {
                let params = frame.get("params").cloned().unwrap_or(Value::Null);
                match method {
                    "initialize" => {
                        self.respond(&id, self.knobs.init_result.clone())?;
                        if self.knobs.crash_after_init {
                            return Err(Exit(CRASH_EXIT_CODE));
                        }
                        Ok(())
                    }
                    "session/new" => self.new_session(&id, &params),
                    "session/prompt" => self.prompt(&id, &params),
                    other => self.error(&id, -32601, &format!("stub-acp: no method {other}")),
                }
            }
        }
    }

    fn new_session(&mut self, id: &Value, params: &Value) -> Result<(), Exit> {
        let cwd_ok = params
            .get("cwd")
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with('/'));
        if !cwd_ok || !params.get("mcpServers").is_some_and(Value::is_array) {
            let msg = "session/new needs an absolute string cwd and an mcpServers array";
            return self.error(id, -32602, msg);
        }
        let result = self.knobs.new_session_result.clone();
        self.session_id = result["sessionId"].as_str().map(str::to_owned);
        self.respond(id, result)?;
        for update in self.knobs.post_new_session_updates.clone() {
            self.update(&update)?;
        }
        Ok(())
    }

    fn prompt(&mut self, id: &Value, params: &Value) -> Result<(), Exit> {
        let sid = params.get("sessionId").and_then(Value::as_str);
        if sid.is_none() || sid != self.session_id.as_deref() {
            return self.error(id, -32602, "session/prompt names an unknown sessionId");
        }
        let Some(blocks) = params.get("prompt").and_then(Value::as_array) else {
            return self.error(id, -32602, "session/prompt needs a prompt array");
        };
        let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
        self.prompts += 1;
        self.cancelled = false;
        for line in self.knobs.prompt_raw_lines.clone() {
            self.write_line(&line)?;
        }
        if self.knobs.emit_permission_request && !self.cancelled {
            let outcome = self.ask_permission()?;
            self.chunk(&format!("permission: {outcome}"))?;
        }
        if let Some(path) = self.knobs.fs_path.clone().filter(|_| !self.cancelled) {
            let report = self.fs_round_trip(&path)?;
            self.chunk(&format!("fs: {report}"))?;
        }
        let updates = match self.knobs.updates_for_prompt(self.prompts) {
            Some(list) => list.to_vec(),
            None => vec![chunk_update(&format!(
                "STUB-ACP-ECHO {}: {text}",
                self.prompts
            ))],
        };
        for update in updates {
            self.poll_cancel();
            if self.cancelled {
                break;
            }
            self.update(&update)?;
        }
        if self.knobs.prompt_wait_for_cancel {
            while !self.cancelled {
                self.wait_response(None)?;
            }
        }
        if self.cancelled {
            let reason = self.knobs.cancel_stop_reason.clone();
            self.respond(id, json!({"stopReason": reason}))?;
            return if self.knobs.exit_on_cancel {
                Err(Exit(0))
            } else {
                Ok(())
            };
        }
        match self.knobs.prompt_error.clone() {
            Some(err) => self.send(&json!({"jsonrpc": "2.0", "id": id, "error": err}))?,
            None => {
                let reason = self.knobs.stop_reason_for_prompt(self.prompts).to_owned();
                self.respond(id, json!({"stopReason": reason}))?;
            }
        }
        if self.knobs.exit_after_prompts == Some(self.prompts) {
            return Err(Exit(0));
        }
        Ok(())
    }

    fn ask_permission(&mut self) -> Result<String, Exit> {
        let params = json!({
            "sessionId": self.session_id,
            "toolCall": {"toolCallId": "tc-99", "title": "stub-acp asks to edit a file",
                         "kind": "edit", "status": "pending"},
            "options": [
                {"optionId": "opt-allow", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "opt-deny", "name": "Deny", "kind": "reject_once"}
            ]
        });
        let reply = self.call("session/request_permission", params)?;
        Ok(match (reply.get("result"), reply.get("error")) {
            (Some(result), _) => match result["outcome"]["outcome"].as_str() {
                Some("selected") => {
                    format!(
                        "selected {}",
                        result["outcome"]["optionId"].as_str().unwrap_or("?")
                    )
                }
                Some(other) => other.to_owned(),
                None => format!("unreadable outcome {result}"),
            },
            (None, Some(err)) => format!("error {err}"),
            (None, None) => "cancelled".to_owned(),
        })
    }

    fn fs_round_trip(&mut self, path: &str) -> Result<String, Exit> {
        let content = format!("stub-acp fs round trip {}", self.prompts);
        let sid = self.session_id.clone();
        let write = json!({"sessionId": sid, "path": path, "content": content});
        let reply = self.call("fs/write_text_file", write)?;
        if let Some(err) = reply.get("error") {
            return Ok(format!("write refused {err}"));
        }
        let reply = self.call("fs/read_text_file", json!({"sessionId": sid, "path": path}))?;
        Ok(
            match (reply["result"]["content"].as_str(), reply.get("error")) {
                (Some(back), _) if back == content => "wrote and read back the same text".into(),
                (Some(back), _) => format!("read back different text {back:?}"),
                (None, err) => format!("read refused {}", err.unwrap_or(&Value::Null)),
            },
        )
    }

    /// Sends a request to the client and waits for its response (or a cancel,
    /// which yields an empty object so the caller reports "cancelled").
    fn call(&mut self, method: &str, params: Value) -> Result<Value, Exit> {
        self.next_id += 1;
        let id = self.next_id;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&frame)?;
        self.wait_response(Some(id))
    }

    /// Blocks for the response `id` (or, with `None`, for any cancel). Other
    /// frames are kept for the main loop; a cancel ends the wait.
    fn wait_response(&mut self, id: Option<u64>) -> Result<Value, Exit> {
        loop {
            match self.rx.recv().unwrap_or(Inbound::Eof) {
                Inbound::Eof => return Err(Exit(0)),
                Inbound::Frame(f) if is_cancel(&f) => {
                    self.cancelled = true;
                    return Ok(json!({}));
                }
                Inbound::Frame(f)
                    if f.get("method").is_none()
                        && id.is_some()
                        && f.get("id").and_then(Value::as_u64) == id =>
                {
                    return Ok(f);
                }
                other => self.backlog.push_back(other),
            }
        }
    }

    /// Notices a cancel that is already queued without blocking.
    fn poll_cancel(&mut self) {
        while let Ok(item) = self.rx.try_recv() {
            match item {
                Inbound::Frame(f) if is_cancel(&f) => self.cancelled = true,
                other => self.backlog.push_back(other),
            }
        }
    }

    fn chunk(&mut self, text: &str) -> Result<(), Exit> {
        self.update(&chunk_update(text))
    }

    fn update(&mut self, update: &Value) -> Result<(), Exit> {
        let sid = self.session_id.clone().unwrap_or_default();
        self.send(&session_update(&sid, update))
    }

    fn respond(&mut self, id: &Value, result: Value) -> Result<(), Exit> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    fn error(&mut self, id: &Value, code: i64, message: &str) -> Result<(), Exit> {
        let err = json!({"code": code, "message": message});
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": err}))
    }

    fn reply_parse_error(&mut self, line: &str) -> Result<(), Exit> {
        let message = format!(
            "stub-acp: not JSON: {}",
            line.chars().take(80).collect::<String>()
        );
        let err = json!({"code": -32700, "message": message});
        self.send(&json!({"jsonrpc": "2.0", "id": null, "error": err}))
    }

    fn send(&mut self, frame: &Value) -> Result<(), Exit> {
        self.write_line(&frame.to_string())
    }

    fn write_line(&mut self, line: &str) -> Result<(), Exit> {
        if self.knobs.delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(self.knobs.delay_ms));
        }
        // A closed stdout means the client is gone: stop quietly with status 1.
        writeln!(self.out, "{line}")
            .and_then(|()| self.out.flush())
            .map_err(|_| Exit(1))
    }
}

fn is_cancel(frame: &Value) -> bool {
    frame.get("method").and_then(Value::as_str) == Some("session/cancel")
        && frame.get("id").is_none()
}

fn chunk_update(text: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
}
