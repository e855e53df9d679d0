//! A web ACP start passes the product's MCP server to the agent in
//! `session/new` `mcpServers` (stdio form): the installed `studyloop-mcp`
//! by absolute path, with only the pinned paths and scope as its env, so a
//! harness driven over ACP gets the same tools as a CLI session. Checked on
//! the frames the real `studyloop-stub-acp` received (`STUB_ACP_LOG`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use super::start_tests::world;

/// The `params` of the `session/new` frame the stub agent logged.
fn session_new_params(log: &Path) -> Value {
    let text = std::fs::read_to_string(log).expect("stub ACP log");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|f| f["method"] == "session/new")
        .map(|f| f["params"].clone())
        .unwrap_or_else(|| panic!("no session/new frame in {text}"))
}

#[test]
fn acp_session_new_carries_the_studyloop_server_with_only_its_env() {
    let tools = tempfile::tempdir().expect("tempdir");
    let mcp = tools.path().join("studyloop-mcp");
    std::fs::write(&mcp, "#!/bin/sh\nexit 0\n").expect("fake server");
    std::fs::set_permissions(&mcp, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let log = tools.path().join("acp.jsonl");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", tools.path().display());
    let w = world(&[
        ("PATH", path.as_str()),
        ("STUB_ACP_LOG", log.to_str().expect("utf-8")),
        ("OPENAI_API_KEY", "sk-must-not-leak"),
        ("SESSION_CONTEXT_SCOPE", "personal"),
    ]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "joins", "agent": "codex", "transport": "acp"}))
            .await;
        assert_eq!(status, 201, "{body}");
        let params = session_new_params(&log);
        let servers = params["mcpServers"].as_array().expect("mcpServers array");
        assert_eq!(servers.len(), 1, "{params}");
        let s = &servers[0];
        assert_eq!(s["name"], "studyloop");
        assert_eq!(s["command"], json!(mcp.display().to_string()));
        assert_eq!(s["args"], json!([]));
        assert!(
            s.get("type").is_none(),
            "the stdio form has no type tag: {s}"
        );
        let env: Vec<(&str, &str)> = s["env"]
            .as_array()
            .expect("env array")
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap_or(""),
                    v["value"].as_str().unwrap_or(""),
                )
            })
            .collect();
        let names: Vec<&str> = env.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "HOME",
                "SESSION_CONTEXT_SCOPE",
                "STUDYLOOP_DB",
                "STUDYLOOP_PLANS_DIR",
                "STUDYLOOP_SESSION_DIR",
                "STUDYLOOP_STATE_DIR",
            ]
        );
        assert!(env.contains(&("SESSION_CONTEXT_SCOPE", "personal")));
        assert!(env.contains(&("HOME", w.home.to_str().expect("utf-8"))));
        assert!(!params.to_string().contains("sk-must-not-leak"), "{params}");
        let (status, _) = w.http("POST", "/api/session/end", None).await;
        assert_eq!(status, 200);
    });
}

#[test]
fn without_an_installed_server_the_list_is_empty_and_the_start_works() {
    let tools = tempfile::tempdir().expect("tempdir");
    let log = tools.path().join("acp.jsonl");
    let w = world(&[("STUB_ACP_LOG", log.to_str().expect("utf-8"))]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "joins", "agent": "claude", "transport": "acp"}))
            .await;
        assert_eq!(status, 201, "{body}");
        assert_eq!(session_new_params(&log)["mcpServers"], json!([]));
    });
}
