//! `studyloop web`'s start/end path end to end, hermetically: a scratch HOME
//! with the default config, the real server on a loopback port, the real
//! session core (claim, persona, SQLite, state file), and
//! `studyloop-stub-acp` (a test double) behind `STUDYLOOP_TEST_ACP_CMD`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::run::build_state;
use super::security::Password;
use super::server::{AppState, router, serve};
use crate::context::Ctx;
use crate::env::Env;
use crate::web::testkit::{self, stub_acp};

pub(super) struct World {
    _root: tempfile::TempDir,
    pub(super) home: PathBuf,
    pub(super) base: String,
    pub(super) state: Arc<AppState>,
    pub(super) rt: tokio::runtime::Runtime,
}

/// A scratch HOME with the default config and a server whose env carries `extra`.
pub(super) fn world(extra: &[(&str, &str)]) -> World {
    let root = tempfile::tempdir().expect("tempdir");
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let tmux_dir = root.path().join("t");
    std::fs::create_dir_all(&tmux_dir).expect("tmux dir");
    let mut pairs: Vec<(String, String)> = vec![
        ("HOME".into(), home.display().to_string()),
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("TMUX_TMPDIR".into(), tmux_dir.display().to_string()),
        (
            "STUDYLOOP_TEST_ACP_CMD".into(),
            format!("'{}'", stub_acp().display()),
        ),
    ];
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let env = Env::from_pairs(pairs);
    let config = crate::settings::config_file(&env).expect("config path");
    crate::config::init(&config, false).expect("default config");
    // The real binary (every launch goes through its `studyloop contain`), reached
    // through a link in a directory of its own: the product looks for `studyloop-mcp`
    // beside its exe first, and the build's target dir holds the real one, which
    // the MCP tests must not find unless they put one on PATH.
    let bin = root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let exe = bin.join("studyloop");
    std::os::unix::fs::symlink(testkit::bin("studyloop"), &exe).expect("link studyloop");
    let ctx = Ctx {
        env,
        cwd: home.clone(),
        exe,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (base, state) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let state = build_state(ctx, port, crate::web::guard::HostPolicy::default());
        let app = router(state.clone(), Password(None));
        tokio::spawn(serve(listener, app, state.clone(), std::future::pending()));
        let base = format!("127.0.0.1:{port}");
        testkit::register(&base, state.token.value());
        (base, state)
    });
    World {
        _root: root,
        home,
        base,
        state,
        rt,
    }
}

impl World {
    pub(super) async fn http(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let r = testkit::request(&self.base, method, path, body.as_ref()).await;
        (r.status, r.json())
    }

    pub(super) async fn start(&self, body: Value) -> (u16, Value) {
        self.http("POST", "/api/session/start", Some(body)).await
    }

    /// `session-state.json`, typed as the product reads it (`None`: no file).
    pub(super) fn state_file(&self) -> Option<crate::state::SessionState> {
        let paths = crate::settings::session_paths(&self.state.ctx.env).expect("paths");
        crate::state::StateStore::new(&paths).read().expect("read")
    }

    /// The state file's `mode`, which must exist.
    #[track_caller]
    fn state_mode(&self) -> String {
        self.state_file()
            .and_then(|s| s.mode)
            .expect("a state file with a mode")
    }
}

pub(super) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(super) async fn ws(w: &World, url: &str) -> Ws {
    let (ws, _) = tokio_tungstenite::connect_async(testkit::ws_request(&w.base, url))
        .await
        .expect("ws");
    ws
}

pub(super) async fn send(ws: &mut Ws, frame: Value) {
    ws.send(Message::Text(frame.to_string().into()))
        .await
        .expect("send");
}

pub(super) async fn until(ws: &mut Ws, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next()).await;
        let Ok(Some(Ok(msg))) = msg else {
            panic!("no frame; seen {seen:#?}")
        };
        if let Message::Text(t) = msg {
            let f: Value = serde_json::from_str(&t).expect("json");
            let stop = done(&f);
            seen.push(f);
            if stop {
                return seen;
            }
        }
    }
}

pub(super) fn turn_end(f: &Value) -> bool {
    f["kind"] == "turn_end"
}

#[test]
fn acp_start_persona_turns_and_end_use_the_session_core() {
    let w = world(&[]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "Rust lifetimes", "agent": "codex", "transport": "acp"}))
            .await;
        assert_eq!(status, 201, "{body}");
        let persona = body["persona_text"].as_str().expect("persona_text");
        assert!(
            persona.starts_with("<!-- PERSONA=studyloop-focus -->"),
            "{persona:.80}"
        );
        assert_eq!(body["persona_hash"].as_str().map(str::len), Some(16));
        let state = w.state_file().expect("claimed");
        assert_eq!(
            (state.transport.as_deref(), state.mode.as_deref()),
            (Some("acp"), Some("focus"))
        );
        assert!(
            state
                .session_dir
                .as_deref()
                .unwrap_or_default()
                .contains("/acp-rust-lifetimes-")
        );

        let (status, again) = w
            .start(json!({"topic": "other", "agent": "codex", "transport": "acp"}))
            .await;
        assert_eq!(status, 409, "{again}");
        assert_eq!(again["error"]["code"], "session_active");
        assert_eq!(
            again["error"]["details"]["study_session_id"],
            body["study_session_id"]
        );

        let mut sock = ws(&w, body["ws_url"].as_str().expect("ws_url")).await;
        assert_eq!(until(&mut sock, |_| true).await[0]["type"], "started");
        send(&mut sock, json!({"type": "input", "data": persona})).await;
        until(&mut sock, turn_end).await;
        for (n, text) in [(2, "what is 'a?"), (3, "and 'static?")] {
            send(&mut sock, json!({"type": "input", "data": text})).await;
            let frames = until(&mut sock, turn_end).await;
            let want = format!("STUB-ACP-ECHO {n}: {text}");
            assert_eq!(frames[0]["payload"]["content"]["text"], json!(want));
        }
        let (status, ended) = w.http("POST", "/api/session/end", None).await;
        assert_eq!(
            (status, ended["topic"].clone()),
            (200, json!("Rust lifetimes"))
        );
        let frames = until(&mut sock, |f| f["type"] == "stopped").await;
        assert_eq!(
            frames.last().map(|f| f["reason"].clone()),
            Some(json!("cancel"))
        );
        assert_eq!(w.state_mode(), crate::state::MODE_ENDED);
        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(st["last_release"]["reason"], "ended");
        let (status, _) = w.http("POST", "/api/session/end", None).await;
        assert_eq!(status, 404);
    });
}

#[test]
fn crash_after_init_fails_the_start_and_rolls_back() {
    let w = world(&[("STUB_ACP_CRASH_AFTER_INIT", "1")]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "t", "agent": "claude", "transport": "acp"}))
            .await;
        assert_eq!(status, 502, "{body}");
        let msg = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("session/new") && msg.contains("status 17"),
            "{msg}"
        );
        assert!(w.state.slot.current().is_none());
        let state = w.state_file();
        assert!(
            state
                .as_ref()
                .is_none_or(|s| s.mode.as_deref() != Some("focus")),
            "claim not rolled back: {state:?}"
        );
        let sessions = crate::settings::session_paths(&w.state.ctx.env)
            .expect("paths")
            .sessions_root();
        let left: Vec<_> = std::fs::read_dir(&sessions)
            .map(|d| d.flatten().count())
            .into_iter()
            .collect();
        assert!(
            left.iter().all(|n| *n == 0),
            "session dir left behind in {}",
            sessions.display()
        );
        let (status, again) = w
            .start(json!({"topic": "t", "agent": "pi", "transport": "pty"}))
            .await;
        assert_ne!(
            status, 409,
            "a failed start must not block the next: {again}"
        );
    });
}

#[test]
fn permission_prompt_error_and_stop_over_the_socket() {
    let w = world(&[
        ("STUB_ACP_EMIT_PERMISSION_REQUEST", "1"),
        ("STUB_ACP_PROMPT_ERROR", "model quota exhausted"),
        ("STUB_ACP_EXIT_ON_CANCEL", "1"),
    ]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "t", "agent": "opencode", "transport": "acp"}))
            .await;
        assert_eq!(status, 201, "{body}");
        let mut sock = ws(&w, body["ws_url"].as_str().expect("ws_url")).await;
        until(&mut sock, |_| true).await;
        send(&mut sock, json!({"type": "input", "data": "go"})).await;
        let frames = until(&mut sock, |f| f["kind"] == "request_permission").await;
        let req_id = frames.last().expect("req")["payload"]["_request_id"].clone();
        let outcome = json!({"outcome": "selected", "optionId": "opt-allow"});
        send(
            &mut sock,
            json!({"type": "permission_response", "requestId": req_id, "outcome": outcome}),
        )
        .await;
        let frames = until(&mut sock, turn_end).await;
        assert!(
            frames
                .iter()
                .any(|f| f["payload"]["content"]["text"] == "permission: selected opt-allow")
        );
        assert!(frames.iter().any(|f| {
            f["type"] == "transport_error"
                && f["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("model quota exhausted")
        }));
        send(&mut sock, json!({"type": "stop"})).await;
        let frames = until(&mut sock, |f| f["type"] == "stopped").await;
        assert_eq!(
            frames.last().map(|f| f["returncode"].clone()),
            Some(json!(0))
        );
        assert_eq!(w.state_mode(), crate::state::MODE_ENDED);
    });
}

#[test]
fn bad_requests_get_the_reference_status_codes() {
    let w = world(&[]);
    w.rt.block_on(async {
        let (s, b) = w
            .start(json!({"topic": "t", "agent": "grok", "transport": "acp"}))
            .await;
        assert_eq!(s, 400, "{b}");
        assert!(
            b["error"]["details"]["supported_agents"]
                .as_array()
                .is_some_and(|a| a.contains(&json!("kiro")))
        );
        let (s, b) = w.start(json!({"topic": "t", "agent": "oclode"})).await;
        assert_eq!(s, 400, "{b}");
        let (s, _) = w
            .start(json!({"topic": "t", "agent": "codex", "transport": "telnet"}))
            .await;
        assert_eq!(s, 422);
        let (s, _) = w.start(json!({"topic": "", "agent": "codex"})).await;
        assert_eq!(s, 422);
        let (s, _) = w
            .start(json!({"topic": "t", "agent": "codex", "energy": 11}))
            .await;
        assert_eq!(s, 422);
        let (s, _) = w
            .start(json!({"topic": "t", "agent": "codex", "origin": "elsewhere"}))
            .await;
        assert_eq!(s, 400);
        let (s, b) = w
            .start(json!({"topic": "t", "agent": "codex", "purpose": "cram"}))
            .await;
        assert_eq!(s, 422, "{b}");
        // The envelope's failure: {"error": {"code", "message", "details"}}.
        assert_eq!(b["error"]["code"], "invalid_input", "{b}");
        let msg = b["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("`cram`") && msg.contains("study, focus or planning"),
            "{b}"
        );
    });
}

/// The Dashboard's "Start a study session" sends `purpose: "study"`: the mentor
/// gets the study persona, the same template `studyloop study` gives.
#[test]
fn a_study_purpose_start_gets_the_study_persona() {
    let w = world(&[]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(
                json!({"topic": "Closures", "agent": "codex", "transport": "acp",
                          "purpose": "study"}),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        let persona = body["persona_text"].as_str().expect("persona_text");
        let marker = crate::persona::marker(crate::persona::Mode::Study);
        assert!(persona.starts_with(&marker), "{persona:.80}");
        assert!(persona.contains("## Your role: study mentor"), "{persona}");
        assert_eq!(
            body["persona_hash"].as_str(),
            Some(crate::persona::persona_hash(persona).as_str())
        );
        assert_eq!(body["purpose"], "study");
        let (_, options) = w.http("GET", "/api/session/options", None).await;
        assert_eq!(options["purposes"], json!(["study", "focus", "planning"]));
        let (status, _) = w.http("POST", "/api/session/end", None).await;
        assert_eq!(status, 200);
    });
}

/// Each purpose's start writes the mode its persona was built for into the state
/// file, the value `studyloop study --mode` writes (`Mode::as_str`), not "focus"
/// for all three; the DB row says the same.
#[test]
fn a_web_start_writes_its_purposes_mode_into_the_state_file() {
    let w = world(&[]);
    w.rt.block_on(async {
        for (purpose, mode) in [
            ("study", "study"),
            ("focus", "focus"),
            ("planning", "plan-architect"),
        ] {
            let (status, body) = w
                .start(
                    json!({"topic": "Closures", "agent": "codex", "transport": "acp",
                              "purpose": purpose}),
                )
                .await;
            assert_eq!(status, 201, "{purpose}: {body}");
            assert_eq!(w.state_mode(), mode, "{purpose}");
            let st = w.state_file().expect("state");
            let id = st.study_session_id.expect("id");
            let db = crate::session::load(&w.state.ctx).expect("load").paths.db;
            let row = crate::store::Store::open(&db)
                .expect("db")
                .study_session(&id)
                .expect("read")
                .expect("row");
            assert_eq!(row.mode.as_deref(), Some(mode), "{purpose}: the DB row");
            let (status, _) = w.http("POST", "/api/session/end", None).await;
            assert_eq!(status, 200, "{purpose}");
        }
    });
}

#[test]
fn missing_binary_is_503_naming_it_and_the_install_hint() {
    // No hatch: the real adapter lookup runs against an empty PATH.
    let w = world(&[("STUDYLOOP_TEST_ACP_CMD", ""), ("PATH", "/nonexistent")]);
    w.rt.block_on(async {
        let (s, b) = w
            .start(json!({"topic": "t", "agent": "codex", "transport": "acp"}))
            .await;
        assert_eq!(s, 503, "{b}");
        assert_eq!(b["error"]["details"]["binary"], "codex-acp");
        assert!(
            b["error"]["details"]["install_hint"]
                .as_str()
                .unwrap_or_default()
                .contains("@zed-industries/codex-acp")
        );
        let (s, b) = w
            .start(json!({"topic": "t", "agent": "pi", "transport": "pty"}))
            .await;
        assert_eq!(
            (s, b["error"]["details"]["binary"].clone()),
            (503, json!("pi")),
            "{b}"
        );
        assert!(w.state_file().is_none(), "nothing claimed");
    });
}

#[test]
fn pty_start_runs_the_hatch_on_a_terminal_with_a_scrubbed_env() {
    let w = world(&[
        (
            "STUDYLOOP_TEST_AGENT_CMD",
            "echo persona-lines=$(wc -l < {persona_file}); echo secret=${MY_API_KEY:-scrubbed}; exec cat",
        ),
        ("MY_API_KEY", "sk-live-should-not-leak"),
    ]);
    w.rt.block_on(async {
        let (s, body) = w
            .start(json!({"topic": "Plan SQL", "agent": "pi", "purpose": "planning"}))
            .await;
        assert_eq!(s, 201, "{body}");
        assert!(
            body.get("persona_text").is_none(),
            "pty does not return the persona"
        );
        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(
            (st["purpose"].clone(), st["transport"].clone()),
            (json!("planning"), json!("pty"))
        );
        let mut sock = ws(&w, body["ws_url"].as_str().expect("ws_url")).await;
        let mut screen = String::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !screen.contains("secret=") || !screen.contains("persona-lines=") {
            let msg = tokio::time::timeout_at(deadline, sock.next()).await;
            match msg {
                Ok(Some(Ok(Message::Binary(b)))) => screen.push_str(&String::from_utf8_lossy(&b)),
                Ok(Some(Ok(_))) => {}
                other => panic!("no output: {other:?}; screen {screen:?}"),
            }
        }
        assert!(screen.contains("secret=scrubbed"), "{screen}");
        assert!(!screen.contains("persona-lines=0"), "{screen}");
        send(&mut sock, json!({"type": "stop"})).await;
        let frames = until(&mut sock, |f| f["type"] == "stopped").await;
        assert_eq!(
            frames.last().map(|f| f["reason"].clone()),
            Some(json!("cancel"))
        );
        assert_eq!(w.state_mode(), crate::state::MODE_ENDED);
        assert!(w.home.exists());
    });
}
