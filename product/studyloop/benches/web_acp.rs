//! The web ACP path's overhead, median of N runs: one session through the
//! real server (POST /api/session/start with the ACP handshake, WebSocket
//! attach, one prompt turn, POST /api/session/end with the common end path)
//! against a baseline measured in the same run: the same agent driven directly
//! through `web::acp::AcpSession` (spawn, handshake, one turn, stop). The
//! agent is `studyloop-stub-acp` (a test double; `cargo build --bins` first).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use studyloop::context::Ctx;
use studyloop::env::Env;
use studyloop::web::acp::{AcpSession, AcpTimeouts, AgentCommand};
use studyloop::web::guard::HostPolicy;
use studyloop::web::run::build_state;
use studyloop::web::security::Password;
use studyloop::web::server::{router, serve};
use tokio_tungstenite::tungstenite::Message;

#[path = "../src/web/testkit.rs"]
#[expect(
    dead_code,
    reason = "the bench reads status and body, never the header block"
)]
mod testkit;

use testkit::stub_acp;

const RUNS: usize = 20;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn http(base: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let r = testkit::request(base, method, path, body.as_ref()).await;
    (r.status, r.json())
}

async fn through_server(base: &str) -> Duration {
    let t = Instant::now();
    let (status, body) = http(
        base,
        "POST",
        "/api/session/start",
        Some(json!({"topic": "bench", "agent": "codex", "transport": "acp"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let url = testkit::ws_request(base, body["ws_url"].as_str().expect("ws_url"));
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    ws.send(Message::Text(
        json!({"type": "input", "data": "hello"}).to_string().into(),
    ))
    .await
    .expect("send");
    while let Some(Ok(msg)) = ws.next().await {
        if let Message::Text(t) = msg
            && t.contains("turn_end")
        {
            break;
        }
    }
    let (status, _) = http(base, "POST", "/api/session/end", None).await;
    assert_eq!(status, 200);
    t.elapsed()
}

async fn direct(stub: &std::path::Path, dir: &std::path::Path) -> Duration {
    let t = Instant::now();
    let cmd = AgentCommand {
        argv: vec![stub.display().to_string()],
        cwd: dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        mcp_servers: Vec::new(),
        turns: None,
    };
    let s = AcpSession::start(cmd, AcpTimeouts::default())
        .await
        .expect("start");
    s.prompt("hello").expect("prompt");
    let events = s.events();
    while let Some(e) = events.recv().await {
        if serde_json::to_string(&e)
            .unwrap_or_default()
            .contains("turn_end")
        {
            break;
        }
    }
    s.stop().await;
    t.elapsed()
}

fn main() {
    let stub = stub_acp();
    let root = tempfile::tempdir().expect("tempdir");
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let env = Env::from_pairs([
        ("HOME", home.display().to_string()),
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("TMUX_TMPDIR", root.path().display().to_string()),
        ("STUDYLOOP_TEST_ACP_CMD", format!("'{}'", stub.display())),
    ]);
    studyloop::config::init(
        &studyloop::settings::config_file(&env).expect("config"),
        false,
    )
    .expect("init");
    let ctx = Ctx {
        env,
        cwd: home.clone(),
        exe: PathBuf::from("/bin/true"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    let (server, baseline) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let state = build_state(ctx, port, HostPolicy::default());
        testkit::register(&format!("127.0.0.1:{port}"), state.token.value());
        tokio::spawn(serve(
            listener,
            router(state.clone(), Password(None)),
            state,
            std::future::pending(),
        ));
        let base = format!("127.0.0.1:{port}");
        let mut full = Vec::with_capacity(RUNS);
        let mut base_runs = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            full.push(through_server(&base).await);
            base_runs.push(direct(&stub, &home).await);
        }
        (median(full), median(base_runs))
    });
    println!(
        "web_acp: start+attach+1 turn+end through studyloop web: median {:.1} ms over {RUNS} runs",
        ms(server)
    );
    println!(
        "web_acp: baseline AcpSession start+1 turn+stop (no HTTP/DB/state): median {:.1} ms",
        ms(baseline)
    );
    println!(
        "web_acp: ratio server/baseline = {:.2}x",
        ms(server) / ms(baseline)
    );
}
