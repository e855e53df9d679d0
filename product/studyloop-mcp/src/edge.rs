//! The thin layer between stdin/stdout and rmcp: read client lines, answer
//! here what rmcp would mis-answer ([`framing::check`]), pass the rest through
//! an in-process pipe, split a `2025-03-26` batch into single messages and
//! join rmcp's answers to it into one array line. The negotiated version is
//! read off rmcp's own `initialize` answer, so rmcp stays the one place that
//! negotiates.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ErrorCode;
use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader,
};
use tokio::sync::mpsc;

use crate::framing::{self, BATCH_VERSION, Verdict};

/// A batch waiting for rmcp's answers.
struct Batch {
    waiting: HashSet<String>,
    answers: Vec<Value>,
}

/// What the two directions share.
#[derive(Default)]
struct Shared {
    negotiated: Option<String>,
    /// Ids of `initialize` requests in flight (their answer names the version).
    initialize: HashSet<String>,
    /// Batch number by the id of each request in it still unanswered.
    waiting: HashMap<String, usize>,
    batches: HashMap<usize, Batch>,
    next_batch: usize,
}

/// Ids compare as their JSON text (`1` and `"1"` stay apart).
fn key(id: &Value) -> String {
    id.to_string()
}

impl Shared {
    /// Count `answer` for request `id`; the whole batch once it is complete.
    /// `None` in the outer option: `id` belongs to no batch.
    fn settle(&mut self, id: &str, answer: Option<Value>) -> Option<Option<Value>> {
        let n = self.waiting.remove(id)?;
        let batch = self.batches.get_mut(&n)?;
        batch.waiting.remove(id);
        batch.answers.extend(answer);
        if !batch.waiting.is_empty() {
            return Some(None);
        }
        let done = self.batches.remove(&n)?;
        // A batch whose requests were all cancelled gets no answer at all.
        Some((!done.answers.is_empty()).then_some(Value::Array(done.answers)))
    }
}

type SharedRef = Arc<Mutex<Shared>>;

fn lock(s: &SharedRef) -> std::sync::MutexGuard<'_, Shared> {
    // The state stays consistent across a panic elsewhere (plain inserts/removes).
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Line {
    Text,
    Oversized,
    Eof,
}

/// Read one line into `buf` (newline kept), at most rmcp's own limit.
async fn read_line<R: AsyncRead + Unpin>(
    r: &mut BufReader<R>,
    buf: &mut Vec<u8>,
) -> io::Result<Line> {
    buf.clear();
    let limit = DEFAULT_MAX_LINE_LENGTH as u64 + 1;
    if (&mut *r).take(limit).read_until(b'\n', buf).await? == 0 {
        return Ok(Line::Eof);
    }
    if buf.last() == Some(&b'\n') || buf.len() <= DEFAULT_MAX_LINE_LENGTH {
        return Ok(Line::Text);
    }
    // Too long: drop the rest of it, as rmcp does, but say so.
    loop {
        buf.clear();
        let n = (&mut *r).take(64 * 1024).read_until(b'\n', buf).await?;
        if n == 0 || buf.last() == Some(&b'\n') {
            return Ok(Line::Oversized);
        }
    }
}

/// A `notifications/cancelled` for a batched request settles it unanswered.
fn cancelled(v: &Value, shared: &SharedRef, out: &mpsc::UnboundedSender<Value>) {
    if v["method"] == "notifications/cancelled"
        && let Some(id) = v["params"].get("requestId")
        && let Some(Some(batch)) = lock(shared).settle(&key(id), None)
    {
        let _ = out.send(batch);
    }
}

/// Client → rmcp.
async fn pump_in<R, W>(
    input: R,
    mut to_rmcp: W,
    shared: SharedRef,
    out: mpsc::UnboundedSender<Value>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        match read_line(&mut input, &mut buf).await? {
            Line::Eof => break,
            Line::Oversized => {
                let msg = format!(
                    "Invalid Request: the line is longer than {DEFAULT_MAX_LINE_LENGTH} bytes and was dropped"
                );
                let _ = out.send(framing::error(
                    Value::Null,
                    ErrorCode::INVALID_REQUEST,
                    &msg,
                ));
                continue;
            }
            Line::Text => {}
        }
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let value = match framing::parse_line(line) {
            Ok(Some(v)) => v,
            Ok(None) => continue,
            Err(answer) => {
                let _ = out.send(answer);
                continue;
            }
        };
        let Value::Array(items) = value else {
            match framing::check(&value) {
                Verdict::Forward {
                    request_id,
                    initialize,
                } => {
                    if initialize && let Some(id) = &request_id {
                        lock(&shared).initialize.insert(key(id));
                    }
                    cancelled(&value, &shared, &out);
                    to_rmcp.write_all(line).await?;
                    to_rmcp.write_all(b"\n").await?;
                    to_rmcp.flush().await?;
                }
                Verdict::Answer(a) => {
                    let _ = out.send(a);
                }
                Verdict::Drop => {}
            }
            continue;
        };
        for msg in split_batch(items, &shared, &out) {
            cancelled(&msg, &shared, &out);
            to_rmcp.write_all(msg.to_string().as_bytes()).await?;
            to_rmcp.write_all(b"\n").await?;
        }
        to_rmcp.flush().await?;
    }
    // EOF: rmcp sees it too and ends the session, as it did on stdin.
    to_rmcp.shutdown().await
}

/// Check a batch; register its requests; return the messages for rmcp.
fn split_batch(
    items: Vec<Value>,
    shared: &SharedRef,
    out: &mpsc::UnboundedSender<Value>,
) -> Vec<Value> {
    let negotiated = lock(shared).negotiated.clone();
    if negotiated.as_deref() != Some(BATCH_VERSION.as_str()) {
        let _ = out.send(framing::refuse_batch(negotiated.as_deref()));
        return Vec::new();
    }
    if items.is_empty() {
        let msg = "Invalid Request: the batch is empty; put at least one message in it";
        let _ = out.send(framing::error(Value::Null, ErrorCode::INVALID_REQUEST, msg));
        return Vec::new();
    }
    let (mut forward, mut answers, mut waiting) = (Vec::new(), Vec::new(), HashSet::new());
    for item in items {
        match framing::check(&item) {
            Verdict::Forward {
                request_id: Some(id),
                initialize: true,
            } => answers.push(framing::error(
                id,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: initialize must not be part of a batch; send it alone",
            )),
            Verdict::Forward { request_id, .. } => {
                if let Some(id) = request_id {
                    waiting.insert(key(&id));
                }
                forward.push(item);
            }
            Verdict::Answer(a) => answers.push(a),
            Verdict::Drop => {}
        }
    }
    if waiting.is_empty() {
        if !answers.is_empty() {
            let _ = out.send(Value::Array(answers));
        }
    } else {
        let mut s = lock(shared);
        let n = s.next_batch;
        s.next_batch += 1;
        for id in &waiting {
            s.waiting.insert(id.clone(), n);
        }
        s.batches.insert(n, Batch { waiting, answers });
    }
    forward
}

/// rmcp → client, and this layer's own answers; the one writer of stdout.
async fn pump_out<R, W>(
    from_rmcp: R,
    mut output: W,
    shared: SharedRef,
    mut own: mpsc::UnboundedReceiver<Value>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(from_rmcp).lines();
    loop {
        let line = tokio::select! {
            l = lines.next_line() => match l? {
                Some(l) => from_server(l, &shared),
                None => break,
            },
            Some(v) = own.recv() => Some(v.to_string()),
        };
        if let Some(line) = line {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await?;
        }
    }
    // rmcp is done; say what this layer still has to say.
    while let Ok(v) = own.try_recv() {
        output.write_all(format!("{v}\n").as_bytes()).await?;
    }
    output.flush().await
}

/// One rmcp line: pass it on, or hold it for its batch (None).
fn from_server(line: String, shared: &SharedRef) -> Option<String> {
    {
        // Nothing to watch for (the common case): pass the line on unparsed.
        let s = lock(shared);
        if s.initialize.is_empty() && s.waiting.is_empty() {
            return Some(line);
        }
    }
    let Ok(v) = serde_json::from_str::<Value>(&line) else {
        return Some(line);
    };
    let is_response = v.get("result").is_some() || v.get("error").is_some();
    let Some(id) = v.get("id").filter(|_| is_response).map(key) else {
        return Some(line);
    };
    let mut s = lock(shared);
    if s.initialize.remove(&id)
        && let Some(version) = v["result"]["protocolVersion"].as_str()
    {
        s.negotiated = Some(version.to_owned());
    }
    match s.settle(&id, Some(v)) {
        None => Some(line),
        Some(batch) => batch.map(|b| b.to_string()),
    }
}

/// Run the layer: `input`/`output` are the client's side (stdin/stdout),
/// `rmcp_side` the in-process pipe rmcp serves on. Returns when rmcp has
/// closed its side (after the client's EOF, or when rmcp gives up).
///
/// # Errors
/// Reading the client or writing to it failed.
pub async fn run<R, W, P>(input: R, output: W, rmcp_side: P) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    P: AsyncRead + AsyncWrite,
{
    let (from_rmcp, to_rmcp) = tokio::io::split(rmcp_side);
    let shared = SharedRef::default();
    let (tx, rx) = mpsc::unbounded_channel();
    let pin_in = pump_in(input, to_rmcp, shared.clone(), tx);
    let pin_out = pump_out(from_rmcp, output, shared, rx);
    tokio::pin!(pin_in, pin_out);
    let mut input_done = false;
    loop {
        tokio::select! {
            r = &mut pin_out => return r,
            r = &mut pin_in, if !input_done => {
                // rmcp may have gone (a write to it failed): the output side ends too.
                if let Err(e) = r && e.kind() != io::ErrorKind::BrokenPipe {
                    return Err(e);
                }
                input_done = true;
            }
        }
    }
}
