//! The web server's slot routes and WebSocket relay, over real HTTP/WS on a
//! loopback port, with `studyloop-stub-acp` (a test double) as the agent.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{self, Message};

use super::acp::{AcpSession, AcpTimeouts, AgentCommand};
use super::listen::Limits;
use super::security::Password;
use super::server::{AppState, router, serve, ws_url};
use super::slot::{Live, LiveInfo, Slot, Transport};
use crate::context::Ctx;
use crate::env::Env;
use crate::web::testkit::{self, stub_acp};

pub(super) struct Server {
    pub(super) base: String,
    pub(super) state: Arc<AppState>,
    pub(super) ended: Arc<Mutex<Vec<String>>>,
    pub(super) stop: Option<tokio::sync::oneshot::Sender<()>>,
}

pub(super) async fn server(password: Option<&str>) -> Server {
    server_with(password, Limits::default()).await
}

/// A server with these connection limits.
pub(super) async fn server_with(password: Option<&str>, limits: Limits) -> Server {
    let ended = Arc::new(Mutex::new(Vec::new()));
    let log = ended.clone();
    let slot = Slot::new(Arc::new(move |info: &LiveInfo, why: &str| {
        log.lock()
            .expect("log")
            .push(format!("{}:{why}", info.study_session_id));
        Ok(())
    }));
    let ctx = Ctx {
        env: Env::from_pairs([("HOME", "/nonexistent-studyloop-test-home")]),
        cwd: PathBuf::from("/"),
        exe: PathBuf::from("/bin/false"),
    };
    let mut state = AppState::new(ctx, slot, Vec::new());
    state.limits = limits;
    let state = Arc::new(state);
    let app = router(state.clone(), Password(password.map(str::to_owned)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("127.0.0.1:{}", listener.local_addr().expect("addr").port());
    testkit::register(&base, state.token.value());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(listener, app, state.clone(), async move {
        let _ = rx.await;
    }));
    Server {
        base,
        state,
        ended,
        stop: Some(tx),
    }
}

async fn start_acp(s: &Server, dir: &Path, knobs: &[(&str, &str)]) -> String {
    let mut env = vec![("PATH".to_owned(), "/usr/bin:/bin".to_owned())];
    env.extend(
        knobs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let cmd = AgentCommand {
        argv: vec![stub_acp().display().to_string()],
        cwd: dir.into(),
        env,
        mcp_servers: Vec::new(),
        turns: None,
    };
    start_acp_cmd(s, cmd).await
}

/// Puts an ACP session running `cmd` into the server's slot; returns its id.
pub(super) async fn start_acp_cmd(s: &Server, cmd: AgentCommand) -> String {
    let acp = AcpSession::start(cmd, AcpTimeouts::default())
        .await
        .expect("stub starts");
    let info = LiveInfo {
        study_session_id: "0123456789abcdef".into(),
        topic: "Ownership".into(),
        energy: 5,
        agent: "codex".into(),
        transport: "acp",
        purpose: "focus".into(),
        origin: "study".into(),
        started_at: "2026-11-30T00:00:00Z".into(),
    };
    let id = info.study_session_id.clone();
    s.state
        .slot
        .occupy(Arc::new(Live::new(info, Transport::Acp(acp))))
        .expect("slot free");
    id
}

pub(super) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(super) async fn connect(
    s: &Server,
    id: &str,
    origin: Option<&str>,
) -> Result<Ws, tungstenite::Error> {
    let mut req = testkit::ws_request(&s.base, &ws_url(id));
    if let Some(o) = origin {
        req.headers_mut()
            .insert("origin", o.parse().expect("header"));
    }
    tokio_tungstenite::connect_async(req)
        .await
        .map(|(ws, _)| ws)
}

pub(super) async fn next_json(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a frame within 10 s")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(t) = msg {
            return serde_json::from_str(&t).expect("json frame");
        }
    }
}

pub(super) async fn until_type(ws: &mut Ws, kind: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let f = next_json(ws).await;
        let done = f["type"] == kind || f["kind"] == kind;
        seen.push(f);
        if done {
            return seen;
        }
    }
}

async fn get(s: &Server, path: &str) -> (u16, String, String) {
    let r = testkit::request(&s.base, "GET", path, None).await;
    (r.status, r.head, r.body)
}

pub(super) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt")
}

#[test]
fn acp_relay_round_trip_then_stop_ends_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = start_acp(&s, dir.path(), &[]).await;
        let origin = format!("http://{}", s.base);
        let mut ws = connect(&s, &id, Some(&origin))
            .await
            .expect("allowed origin");
        assert_eq!(
            next_json(&mut ws).await,
            json!({"type": "started", "agent": "codex"})
        );
        let input = json!({"type": "input", "data": "what is a borrow?"}).to_string();
        ws.send(Message::Text(input.into())).await.expect("send");
        let frames = until_type(&mut ws, "turn_end").await;
        assert_eq!(
            frames[0]["payload"]["content"]["text"],
            "STUB-ACP-ECHO 1: what is a borrow?"
        );
        ws.send(Message::Text(json!({"type": "stop"}).to_string().into()))
            .await
            .expect("stop");
        let frames = until_type(&mut ws, "stopped").await;
        assert_eq!(
            frames.last().map(|f| f["reason"].clone()),
            Some(json!("cancel"))
        );
        assert_eq!(*s.ended.lock().expect("log"), [format!("{id}:ended")]);
        let state = testkit::request(&s.base, "GET", "/api/session/state", None)
            .await
            .json();
        assert_eq!(state["active"], false);
        assert_eq!(state["last_release"]["reason"], "ended");
    });
}

#[test]
fn foreign_origin_and_wrong_id_are_refused_before_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = start_acp(&s, dir.path(), &[]).await;
        for (sid, origin) in [(id.as_str(), Some("https://evil.example")), ("nope", None)] {
            match connect(&s, sid, origin).await {
                Err(tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 403),
                other => panic!("expected HTTP 403, got {:?}", other.map(|_| "a socket")),
            }
        }
        assert!(
            s.state.slot.current().is_some(),
            "a refused socket must not end the session"
        );
    });
}

#[test]
fn malformed_agent_frame_ends_the_session_and_the_server_lives_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = start_acp(
            &s,
            dir.path(),
            &[("STUB_ACP_PROMPT_RAW_LINES", r#"["}{ not json"]"#)],
        )
        .await;
        let mut ws = connect(&s, &id, None)
            .await
            .expect("no origin: non-browser client");
        next_json(&mut ws).await;
        ws.send(Message::Text(
            json!({"type": "input", "data": "x"}).to_string().into(),
        ))
        .await
        .expect("send");
        let frames = until_type(&mut ws, "stopped").await;
        assert!(
            frames.iter().any(|f| f["type"] == "transport_error"
                && f["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("}{ not json")),
            "{frames:#?}"
        );
        assert_eq!(
            frames.last().map(|f| f["reason"].clone()),
            Some(json!("error"))
        );
        let (status, _, body) = get(&s, "/api/session/state").await;
        assert_eq!(status, 200, "server still answers");
        assert!(body.contains("\"active\":false"), "{body}");
        assert_eq!(s.ended.lock().expect("log").len(), 1);
    });
}

#[test]
fn newest_socket_wins_and_end_without_session_is_404() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = start_acp(&s, dir.path(), &[]).await;
        let mut first = connect(&s, &id, None).await.expect("first");
        next_json(&mut first).await;
        let mut second = connect(&s, &id, None).await.expect("second");
        next_json(&mut second).await;
        assert_eq!(next_json(&mut first).await["type"], "attach_superseded");
        s.state.slot.end(None, "ended", true).await.expect("ended");
        let mut stream = tokio::net::TcpStream::connect(&s.base).await.expect("connect");
        let req = format!("POST /api/session/end HTTP/1.1\r\nHost: {}\r\nx-studyloop-token: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", s.base, testkit::token_of(&s.base));
        tokio::io::AsyncWriteExt::write_all(&mut stream, req.as_bytes()).await.expect("write");
        let mut raw = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut raw).await.expect("read");
        assert!(raw.starts_with("HTTP/1.1 404"), "{raw}");
        assert!(raw.contains("No active session"), "{raw}");
    });
}

#[test]
fn pages_carry_security_headers_and_testids_and_password_gates() {
    rt().block_on(async {
        let mut s = server(None).await;
        let (status, head, body) = get(&s, "/").await;
        assert_eq!(status, 200);
        assert!(
            head.contains("content-security-policy: default-src 'self'"),
            "{head}"
        );
        assert!(
            head.contains("x-frame-options: deny") && head.contains("nosniff"),
            "{head}"
        );
        for id in [
            "plan-architect-subject",
            "plan-architect",
            "console-purpose-label",
        ] {
            assert!(
                body.contains(&format!("data-testid=\"{id}\"")),
                "missing {id}"
            );
        }
        let (status, _, js) = get(&s, "/static/app.js").await;
        assert!(status == 200 && js.contains("today-card") && js.contains("today-plan"));
        let _ = s.stop.take().map(|tx| tx.send(()));

        let gated = server(Some("s3cret")).await;
        let (status, head, _) = get(&gated, "/api/session/state").await;
        assert_eq!(status, 401);
        assert!(head.contains("www-authenticate: basic"), "{head}");
    });
}
