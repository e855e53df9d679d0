//! The MCP tool round trip over stdio (issue 14, target p50 < 20 ms): the real
//! `studyloop-mcp` binary answering `get_study_plan` for a saved plan, against a
//! baseline measured in the same run: the same JSON-RPC line echoed back by
//! `cat` through the same kind of pipes (what the transport alone costs).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ROUNDS: usize = 200;

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn spawn(cmd: &mut Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
        }
    }

    /// Writes one line and reads one line back.
    fn round_trip(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
        let mut out = String::new();
        self.stdout.read_line(&mut out).expect("read");
        out
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rpc(id: u64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn p50(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn timed(rounds: usize, mut f: impl FnMut(u64)) -> Duration {
    let times = (0..rounds)
        .map(|i| {
            let t = Instant::now();
            f(i as u64);
            t.elapsed()
        })
        .collect();
    p50(times)
}

fn main() {
    let home = tempfile::tempdir().expect("tempdir");
    studyloop::config::init(&home.path().join(".config/studyloop/config.yaml"), false)
        .expect("config");
    let mut mcp = Peer::spawn(
        Command::new(env!("CARGO_BIN_EXE_studyloop-mcp"))
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", "/usr/bin:/bin")
            .env("STUDYLOOP_PLANS_DIR", home.path().join("plans")),
    );
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "studyloop-bench", "version": "0"}});
    let reply = mcp.round_trip(&rpc(0, "initialize", &init));
    assert!(reply.contains("\"studyloop\""), "initialize: {reply}");
    writeln!(
        mcp.stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .expect("write");
    let create = json!({"name": "create_study_plan",
        "arguments": {"title": "P", "plan_id": "p", "answers": {}, "request_id": "bench-p"}});
    let reply = mcp.round_trip(&rpc(1, "tools/call", &create));
    assert!(!reply.contains("\"isError\":true"), "create: {reply}");
    let get = json!({"name": "get_study_plan", "arguments": {"plan_id": "p"}});
    let tool = timed(ROUNDS, |i| {
        let reply = mcp.round_trip(&rpc(i + 2, "tools/call", &get));
        assert!(reply.contains("\"result\""), "get: {reply}");
    });
    let mut cat = Peer::spawn(&mut Command::new("cat"));
    let line = rpc(2, "tools/call", &get);
    let baseline = timed(ROUNDS, |_| {
        cat.round_trip(&line);
    });
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "mcp stdio round trip (get_study_plan, {ROUNDS} calls): p50 {:.3} ms; baseline (the same line through `cat`) p50 {:.3} ms; ratio {:.1}x; target p50 < 20 ms",
        ms(tool),
        ms(baseline),
        tool.as_secs_f64() / baseline.as_secs_f64().max(1e-9)
    );
}
