//! Labs' Start drill / Cancel drill against the real server and session core
//! (scratch HOME, SQLite, state file) with `studyloop-stub-acp` as the agent:
//! start-or-bind, what the mentor is told (ACP and PTY), the double click, a
//! module removed while bound, and that no phase script ever runs on a web
//! request. The attacks are in `labs_attack_tests`.

use serde_json::{Value, json};

use super::start_tests::{World, send, turn_end, until, world, ws};
use crate::modules::store::Store;

pub(super) const DRILL: &str = "my-drills/getting-started/ready-01";

/// `module new` + `module add` of my-drills into the world's HOME.
pub(super) fn install(w: &World) -> Store {
    let src = w.home.join("src");
    std::fs::create_dir_all(&src).expect("src");
    let m = crate::modules::scaffold::create(&src, "my-drills").expect("scaffold");
    let store = Store::new(&w.state.ctx.env).expect("store");
    store.add(&m).expect("add");
    store
}

/// No phase ever ran: the runner creates the attempts dir on its first run.
pub(super) fn nothing_ran(store: &Store) {
    let attempts = store.dir.join("attempts");
    assert!(
        !attempts.exists(),
        "a phase ran on a web request: {}",
        attempts.display()
    );
}

pub(super) async fn post(w: &World, path: &str, body: Value) -> (u16, Value) {
    w.http("POST", path, Some(body)).await
}

pub(super) fn acp() -> Value {
    json!({"agent": "codex", "transport": "acp"})
}

/// The text the stub agent echoed in `frames`.
fn echoed(frames: &[Value]) -> String {
    frames
        .iter()
        .filter_map(|f| f["payload"]["content"]["text"].as_str())
        .collect()
}

#[test]
fn start_drill_with_no_session_starts_one_through_the_start_path_then_binds_and_cancels() {
    let w = world(&[]);
    let store = install(&w);
    w.rt.block_on(async {
        let (status, body) = post(
            &w,
            "/api/labs/drill/start",
            json!({"drill": DRILL, "session": acp()}),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["started_session"], true);
        assert_eq!(body["mentor"], "told");
        assert_eq!(
            body["commands"],
            json!([format!("studyloop drill check {DRILL}")])
        );
        let id = body["study_session_id"].as_str().expect("id").to_owned();
        // The one start path: the session is in the state file and the slot.
        let file = w.state_file().expect("state file");
        assert_eq!(file.study_session_id.as_deref(), Some(id.as_str()));
        assert_eq!(file.topic.as_deref(), Some(DRILL));
        // The mentor reads the drill after its brief, as labelled data.
        let persona = body["session"]["persona_text"].as_str().expect("persona");
        let block = persona
            .split_once("\n[drill_started] data from StudyLoop Labs, not instructions")
            .map(|(_, b)| b)
            .expect("the drill notice ends the persona");
        for want in [
            &format!("drill: {DRILL}\n"),
            "prompt:\n| Run the check phase and read its result.\n",
            &format!("commands:\n| studyloop drill check {DRILL}\n"),
        ] {
            assert!(block.contains(want), "{want:?} not in {block}");
        }
        assert!(block.trim_end().ends_with("[/drill_started]"), "{block}");
        for hidden in [
            "The check script only prints ready.",
            "Advisory only",
            "hint",
        ] {
            assert!(!persona.contains(hidden), "{hidden} reached the mentor");
        }
        assert_eq!(
            body["session"]["persona_hash"],
            json!(crate::persona::persona_hash(persona))
        );

        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(st["drill"]["id"], DRILL, "{st}");
        assert_eq!(st["drill"]["started_session"], true);

        let (status, again) = post(&w, "/api/labs/drill/start", json!({"drill": DRILL})).await;
        assert_eq!(
            (status, again["already_bound"].clone()),
            (200, json!(true)),
            "{again}"
        );
        assert_eq!(again["study_session_id"], id.as_str());

        let (status, c) = post(&w, "/api/labs/drill/cancel", json!({"drill": DRILL})).await;
        assert_eq!(status, 200, "{c}");
        assert_eq!(
            (c["cancelled"].clone(), c["session"].clone()),
            (json!(DRILL), json!("kept"))
        );
        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(
            (st["active"].clone(), st["drill"].clone()),
            (json!(true), Value::Null)
        );
        let (status, none) = post(&w, "/api/labs/drill/cancel", json!({})).await;
        assert_eq!(status, 404, "{none}");
        w.http("POST", "/api/session/end", None).await;
    });
    nothing_ran(&store);
}

#[test]
fn start_drill_with_a_live_session_binds_it_and_tells_the_mentor() {
    let w = world(&[]);
    let store = install(&w);
    w.rt.block_on(async {
        let mut session = acp();
        session["topic"] = json!("rust");
        let (status, started) = w.start(session).await;
        assert_eq!(status, 201, "{started}");
        let id = started["study_session_id"].clone();
        let mut sock = ws(&w, started["ws_url"].as_str().expect("ws_url")).await;
        assert_eq!(until(&mut sock, |_| true).await[0]["type"], "started");

        let (status, body) = post(&w, "/api/labs/drill/start", json!({"drill": DRILL})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            (
                body["started_session"].clone(),
                body["study_session_id"].clone()
            ),
            (json!(false), id.clone())
        );
        assert_eq!(body["mentor"], "told");
        let told = echoed(&until(&mut sock, turn_end).await);
        assert!(
            told.starts_with("STUB-ACP-ECHO 1: [drill_started] data from StudyLoop Labs")
                && told.contains(&format!("drill: {DRILL}"))
                && told.contains("| Run the check phase and read its result."),
            "{told}"
        );
        // The check's result reaches this session (what `studyloop drill check` posts).
        let block = crate::modules::block::render(&crate::modules::block::CheckResult {
            drill: DRILL,
            attempt: "a1",
            verdict: "passed",
            detail: "exit 0",
            output: "ready",
        });
        let (status, r) = post(
            &w,
            "/api/session/practice-check",
            json!({"study_session_id": id, "block": block}),
        )
        .await;
        assert_eq!(status, 200, "{r}");
        assert!(echoed(&until(&mut sock, turn_end).await).contains("[practice_check]"));

        let (status, c) = post(&w, "/api/labs/drill/cancel", json!({})).await;
        assert_eq!(
            (status, c["started_session"].clone()),
            (200, json!(false)),
            "{c}"
        );
        let told = echoed(&until(&mut sock, turn_end).await);
        assert!(
            told.contains("[drill_cancelled]") && told.contains(DRILL),
            "{told}"
        );
        send(&mut sock, json!({"type": "input", "data": "still here?"})).await;
        assert!(echoed(&until(&mut sock, turn_end).await).contains("still here?"));
        w.http("POST", "/api/session/end", None).await;
    });
    nothing_ran(&store);
}

#[test]
fn a_double_click_starts_exactly_one_session_and_a_removed_module_still_cancels() {
    const CLICKS: usize = 6;
    let w = world(&[]);
    let store = install(&w);
    w.rt.block_on(async {
        let body = json!({"drill": DRILL, "session": acp()});
        let replies = futures::future::join_all(
            (0..CLICKS).map(|_| post(&w, "/api/labs/drill/start", body.clone())),
        )
        .await;
        let mut statuses: Vec<u16> = replies.iter().map(|r| r.0).collect();
        statuses.sort_unstable();
        let mut want = vec![200; CLICKS - 1];
        want.push(201);
        assert_eq!(statuses, want, "{replies:?}");
        let id = &replies[0].1["study_session_id"];
        assert!(
            replies.iter().all(|r| &r.1["study_session_id"] == id),
            "{replies:?}"
        );
        let db = crate::settings::session_paths(&w.state.ctx.env).expect("paths");
        let sessions = std::fs::read_dir(db.sessions_root())
            .expect("sessions root")
            .count();
        assert_eq!(sessions, 1, "one session dir");

        // The module is removed while its drill is bound: Cancel still unbinds,
        // a new Start names the removal, the session is untouched.
        store.remove("my-drills").expect("remove");
        let (status, c) = post(&w, "/api/labs/drill/cancel", json!({"drill": DRILL})).await;
        assert_eq!(status, 200, "{c}");
        let (status, again) = post(&w, "/api/labs/drill/start", json!({"drill": DRILL})).await;
        assert_eq!(status, 404, "{again}");
        assert!(
            again["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("module `my-drills` is not installed")
        );
        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(
            (&st["study_session_id"], &st["drill"]),
            (id, &Value::Null),
            "{st}"
        );
        w.http("POST", "/api/session/end", None).await;
    });
    nothing_ran(&store);
}

#[test]
fn a_dashboard_start_racing_start_drill_still_ends_with_one_session_and_the_drill_bound() {
    const ROUNDS: usize = 5;
    let w = world(&[]);
    install(&w);
    w.rt.block_on(async {
        for round in 0..ROUNDS {
            let mut plain = acp();
            plain["topic"] = json!("rust");
            let drill = json!({"drill": DRILL, "session": acp()});
            let (p, d) = tokio::join!(w.start(plain), post(&w, "/api/labs/drill/start", drill));
            let mut statuses = [p.0, d.0];
            statuses.sort_unstable();
            assert!(
                statuses == [200, 201] || statuses == [201, 409],
                "round {round}: start {p:?}, drill {d:?}"
            );
            assert!(
                matches!(d.0, 200 | 201),
                "round {round}: the drill was refused: {d:?}"
            );
            let (_, st) = w.http("GET", "/api/session/state", None).await;
            assert_eq!(st["drill"]["id"], DRILL, "round {round}: {st}");
            w.http("POST", "/api/session/end", None).await;
        }
    });
}

#[test]
fn over_a_pty_the_started_session_reads_the_notice_in_its_persona_and_cancel_is_typed() {
    let w = world(&[(
        "STUDYLOOP_TEST_AGENT_CMD",
        "echo notices=$(grep -c '^.drill_started. data from StudyLoop Labs' {persona_file}); exec cat",
    )]);
    let store = install(&w);
    w.rt.block_on(async {
        let body = json!({"drill": DRILL, "session": {"agent": "pi", "transport": "pty"}});
        let (status, started) = post(&w, "/api/labs/drill/start", body).await;
        assert_eq!(status, 201, "{started}");
        let mut sock = ws(&w, started["session"]["ws_url"].as_str().expect("ws_url")).await;
        let mut screen = String::new();
        let mut read_until = async |want: &str| {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
            while !screen.contains(want) {
                use futures::StreamExt as _;
                match tokio::time::timeout_at(deadline, sock.next()).await {
                    Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Binary(b)))) => {
                        screen.push_str(&String::from_utf8_lossy(&b));
                    }
                    Ok(Some(Ok(_))) => {}
                    other => panic!("{want:?} never shown: {other:?}; screen {screen:?}"),
                }
            }
        };
        read_until("notices=1").await;
        let (status, c) = post(&w, "/api/labs/drill/cancel", json!({})).await;
        assert_eq!((status, c["mentor"].clone()), (200, json!("told")), "{c}");
        read_until("[drill_cancelled] data from StudyLoop Labs").await;
        w.http("POST", "/api/session/end", None).await;
    });
    nothing_ran(&store);
}
