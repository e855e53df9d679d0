//! Resource limits over real sockets: an ACP update burst beyond the bounded
//! queue reaches the console as a visible `gap` frame, idle and slowloris
//! connections are closed, the connection cap holds, PTY input is bounded.

use std::time::Duration;

use serde_json::Value;

use super::listen::Limits;
use super::server_tests::{connect, next_json, rt, server, server_with, start_acp_cmd};
use super::testkit;
use crate::web::acp::limit_tests::script_agent;

/// How many chunks the burst sends (more than the event queue holds).
const BURST: u64 = 20_000;

#[test]
fn an_update_burst_beyond_the_queue_reaches_the_console_as_a_gap_notice() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let chunk = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"script-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"&"}}}}"#;
        let body = format!(
            "(seq 1 {BURST}; echo END) | sed 's|.*|{}|'; sleep 300",
            chunk.replace('/', "\\/")
        );
        let id = start_acp_cmd(&s, script_agent(dir.path(), &body)).await;
        // Let the whole burst arrive while nobody reads.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let mut ws = connect(&s, &id, None).await.expect("attach");
        assert_eq!(next_json(&mut ws).await["type"], "started");
        let (mut delivered, mut dropped, mut first) = (0_u64, 0_u64, None::<Value>);
        loop {
            let f = next_json(&mut ws).await;
            first.get_or_insert_with(|| f.clone());
            if f["type"] == "gap" {
                dropped += f["dropped"].as_u64().expect("gap.dropped");
                assert!(f["message"].as_str().is_some_and(|m| m.contains("dropped")), "{f}");
                continue;
            }
            assert_eq!(f["kind"], "agent_chunk", "{f}");
            delivered += 1;
            if f["payload"]["content"]["text"] == "END" {
                break;
            }
        }
        eprintln!("burst: {BURST}+1 chunks, {delivered} delivered, {dropped} reported dropped");
        assert_eq!(first.map(|f| f["type"].clone()), Some("gap".into()), "the gap comes first");
        assert_eq!(delivered + dropped, BURST + 1, "every chunk is delivered or counted");
    });
}

/// Reads until EOF or an error; `None` when the server kept the socket open past `within`.
async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) -> Option<Duration> {
    use tokio::io::AsyncReadExt;
    let started = std::time::Instant::now();
    let mut buf = [0_u8; 1024];
    let read_all = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, read_all)
        .await
        .ok()
        .map(|()| started.elapsed())
}

#[test]
fn idle_and_slowloris_connections_are_closed_after_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    rt().block_on(async {
        let limits = Limits {
            header_read_timeout: Duration::from_millis(300),
            ..Limits::default()
        };
        let s = server_with(None, limits).await;
        let mut idle = tokio::net::TcpStream::connect(&s.base)
            .await
            .expect("connect");
        let mut slow = tokio::net::TcpStream::connect(&s.base)
            .await
            .expect("connect");
        slow.write_all(b"GET / HTTP/1.1\r\nHost: ")
            .await
            .expect("write");
        let dribbler = {
            let mut half = tokio::net::TcpStream::connect(&s.base)
                .await
                .expect("connect");
            tokio::spawn(async move {
                // One byte every 50 ms, never finishing the head.
                for _ in 0..100 {
                    if half.write_all(b"X").await.is_err() {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                false
            })
        };
        for (name, stream) in [("idle", &mut idle), ("slowloris", &mut slow)] {
            let took = closed_within(stream, Duration::from_secs(3)).await;
            assert!(took.is_some(), "{name} connection still open after 3 s");
        }
        let cut = tokio::time::timeout(Duration::from_secs(4), dribbler)
            .await
            .expect("the dribbling client was cut off")
            .expect("task");
        assert!(cut, "a head dribbled byte by byte must still time out");
        // A keep-alive connection idle after its response is closed too.
        let mut keep = tokio::net::TcpStream::connect(&s.base)
            .await
            .expect("connect");
        let req = format!(
            "GET /api/session/state HTTP/1.1\r\nHost: {}\r\n\r\n",
            s.base
        );
        keep.write_all(req.as_bytes()).await.expect("write");
        assert!(
            closed_within(&mut keep, Duration::from_secs(3))
                .await
                .is_some()
        );
    });
}

/// Past the unauthenticated budget a new connection is served and the oldest tokenless one
/// is closed for it, so held sockets neither grow without bound nor lock anyone out.
#[test]
fn past_the_unauthenticated_budget_the_oldest_tokenless_connection_goes() {
    rt().block_on(async {
        let limits = Limits {
            header_read_timeout: Duration::from_secs(30),
            max_connections: 4,
            max_unauthenticated: 4,
        };
        let s = server_with(None, limits).await;
        let mut held = Vec::new();
        for _ in 0..4 {
            held.push(
                tokio::net::TcpStream::connect(&s.base)
                    .await
                    .expect("connect"),
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let r = testkit::request(&s.base, "GET", "/api/session/state", None).await;
        assert_eq!(r.status, 200, "a fifth connection is served, not refused");
        assert!(
            closed_within(&mut held[0], Duration::from_secs(2))
                .await
                .is_some(),
            "the oldest tokenless connection must have been closed for it"
        );
        for later in &mut held[2..] {
            assert!(
                closed_within(later, Duration::from_millis(200))
                    .await
                    .is_none(),
                "only the oldest goes"
            );
        }
    });
}

#[test]
fn an_agent_flooding_without_newlines_is_ended_through_the_end_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = start_acp_cmd(
            &s,
            script_agent(
                dir.path(),
                "head -c 67108864 /dev/zero | tr '\\0' a; sleep 300",
            ),
        )
        .await;
        let pid = s
            .state
            .slot
            .current()
            .and_then(|l| l.child_pid())
            .expect("pid");
        let mut ws = connect(&s, &id, None).await.expect("attach");
        let mut frames = Vec::new();
        loop {
            let f = next_json(&mut ws).await;
            let done = f["type"] == "stopped";
            frames.push(f);
            if done {
                break;
            }
        }
        assert!(
            frames.iter().any(|f| f["type"] == "transport_error"),
            "{frames:#?}"
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        // `last_release` is recorded after the end hook ran.
        while s.state.slot.last_release().is_none() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            s.state.slot.current().is_none(),
            "the slot still holds the session"
        );
        assert_eq!(
            s.ended.lock().expect("log").len(),
            1,
            "the end hook ran once"
        );
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|st| st.contains(") Z")),
            "agent {pid} still running"
        );
    });
}
