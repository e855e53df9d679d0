//! Labs' Start drill / Cancel drill clicked in real headless Chromium
//! (driven by chromedriver over W3C WebDriver) against the real `studyloop
//! web`, with `studyloop-stub-acp` as the agent: a click with no session
//! starts one and shows the commands; a click with a live session binds it
//! without a second start; `studyloop drill check` (typed consent on a real
//! terminal) then reports `Mentor told.` into that session; Cancel drill
//! unbinds and keeps the session.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::commands::{
    acp_stub_world, console_url, drill_on_a_tty, installed_and_served, token_header,
};
use crate::common::World;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const DRILL: &str = "my-drills/getting-started/ready-01";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// One HTTP/1.1 exchange with a loopback server, the body read to its
/// `Content-Length` (chromedriver keeps the connection open).
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        token_header(port),
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(c);
    let (mut status, mut len) = (0, None);
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("http/") {
            status = lower
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
        } else if let Some(v) = lower.strip_prefix("content-length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut buf = Vec::new();
    match len {
        Some(n) => {
            buf.resize(n, 0);
            r.read_exact(&mut buf).expect("body");
        }
        None => {
            let _ = r.read_to_end(&mut buf);
        }
    }
    (status, serde_json::from_slice(&buf).unwrap_or(Value::Null))
}

/// chromedriver (in its own process group, killed with it) and one session.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    fn launch(w: &World, profile: &std::path::Path) -> Self {
        for bin in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                std::path::Path::new(bin).is_file(),
                "{bin} is missing: run `just deps-browser` (apt-get install chromium chromium-driver)"
            );
        }
        let mut driver = {
            use std::os::unix::process::CommandExt as _;
            w.program(CHROMEDRIVER, &["--port=0", "--log-level=WARNING"])
                .process_group(0)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver")
        };
        let out = BufReader::new(driver.stdout.take().expect("stdout"));
        let port = out
            .lines()
            .map_while(Result::ok)
            .find_map(|l| {
                let rest = l.split("started successfully on port ").nth(1)?;
                rest.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse::<u16>()
                    .ok()
            })
            .expect("chromedriver's port");
        let args = json!([
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-extensions",
            format!("--user-data-dir={}", profile.display()),
        ]);
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args}}}});
        let (status, v) = http(port, "POST", "/session", Some(&caps));
        let mut b = Self {
            driver,
            port,
            session: String::new(),
        };
        assert_eq!(status, 200, "new session: {v}");
        b.session = v["value"]["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_owned();
        b
    }

    fn cmd(&self, method: &str, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let (status, v) = http(self.port, method, &path, Some(&body));
        assert_eq!(status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    fn goto(&self, url: &str) {
        self.cmd("POST", "/url", json!({ "url": url }));
    }

    /// Runs `script` (a function body) in the page and returns its value.
    fn eval(&self, script: &str) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
    }

    /// Waits (20 s) until `script` returns true; panics with `what`.
    fn until(&self, what: &str, script: &str) {
        let end = Instant::now() + Duration::from_secs(20);
        while self.eval(script) != json!(true) {
            assert!(
                Instant::now() < end,
                "{what}: not within 20 s; page: {}",
                self.eval("return document.body.innerText")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A real (WebDriver) click on the visible element `css`, found again
    /// when the SPA re-rendered it between the find and the click.
    fn click(&self, css: &str) {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            self.until(
                &format!("{css} visible"),
                &format!("const e = document.querySelector({css:?}); return Boolean(e && e.offsetParent);"),
            );
            let el = self.cmd(
                "POST",
                "/element",
                json!({"using": "css selector", "value": css}),
            );
            let id = el[ELEMENT].as_str().expect("element id").to_owned();
            let path = format!("/session/{}/element/{id}/click", self.session);
            let (status, v) = http(self.port, "POST", &path, Some(&json!({})));
            if status == 200 {
                return;
            }
            let stale = v["value"]["error"] == "stale element reference";
            assert!(stale && Instant::now() < end, "click {css}: {v}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn text(&self, css: &str) -> String {
        self.eval(&format!(
            "const e = document.querySelector({css:?}); return e ? e.innerText : '';"
        ))
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(
            self.port,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        // chromedriver and every Chromium process it started share its group.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.driver.id())])
            .status();
        let _ = self.driver.wait();
    }
}

fn state(port: u16) -> Value {
    // The envelope's result (docs/schemas/envelope.schema.json).
    http(port, "GET", "/api/session/state", None).1["result"].clone()
}

fn study_sessions(w: &World) -> i64 {
    w.db()
        .query_row("SELECT count(*) FROM study_sessions", [], |r| r.get(0))
        .expect("count")
}

#[test]
fn start_drill_in_chromium_starts_or_binds_the_session_and_the_check_tells_it() {
    let w = acp_stub_world();
    // The dashboard's default agent: a codex on PATH (the hatch runs the stub).
    w.fake_bin("codex", "exit 0");
    let (web, port) = installed_and_served(&w);
    let _web = KillOnDrop(web);
    let profile = tempfile::tempdir().unwrap();
    let b = Browser::launch(&w, profile.path());
    let attempts = w.config_dir().join("modules/attempts");

    // No session: Start drill starts one and shows the commands.
    b.goto(&console_url(port, "labs"));
    b.click("[data-testid=labs-start]");
    b.until(
        "the console with the active drill",
        "return location.hash === '#study-session' && !document.getElementById('console-drill').hidden",
    );
    let commands = b.text("[data-testid=console-drill-commands]");
    assert_eq!(commands.trim(), format!("studyloop drill check {DRILL}"));
    let st = state(port);
    assert_eq!(
        (st["active"].clone(), st["transport"].clone()),
        (json!(true), json!("acp")),
        "{st}"
    );
    assert_eq!(
        (
            st["drill"]["id"].clone(),
            st["drill"]["started_session"].clone()
        ),
        (json!(DRILL), json!(true))
    );
    let first = st["study_session_id"].clone();
    assert_eq!(study_sessions(&w), 1);
    b.until(
        "the console attached",
        "return document.getElementById('agent-console').dataset.connected === 'true'",
    );

    // Cancel drill (from the console): unbound, the session keeps running.
    b.click("[data-testid=console-drill-cancel]");
    b.until(
        "the drill cancelled",
        "return document.getElementById('console-drill').hidden && document.body.dataset.drillSession === 'cancelled'",
    );
    assert!(
        b.text("[data-testid=console-drill-status]")
            .contains("The study session it started keeps running")
    );
    let st = state(port);
    assert_eq!(
        (st["active"].clone(), st["drill"].clone()),
        (json!(true), Value::Null),
        "{st}"
    );

    // A live session: Start drill binds it, no second start.
    b.goto(&console_url(port, "labs"));
    b.click("[data-testid=labs-start]");
    b.until(
        "the drill bound, commands shown",
        "const c = document.querySelector('[data-testid=labs-commands]'); return document.body.dataset.drillSession === 'bound' && !c.hidden",
    );
    assert_eq!(
        b.text("[data-testid=labs-commands]").trim(),
        format!("studyloop drill check {DRILL}")
    );
    let status = b.text("[data-testid=labs-drill-status]");
    assert!(
        status.contains("Drill bound to your live study session. Mentor told."),
        "{status}"
    );
    let st = state(port);
    assert_eq!(
        st["study_session_id"], first,
        "a second session started: {st}"
    );
    assert_eq!(st["drill"]["started_session"], false, "{st}");
    assert_eq!(
        study_sessions(&w),
        1,
        "a second start reached the session core"
    );
    assert!(!attempts.exists(), "a phase ran from the browser");

    // The learner's terminal: typed consent, then the result reaches this session.
    let told = drill_on_a_tty(&w, "check", "yes\n");
    assert_eq!(told.code, 0, "{told:?}");
    assert!(told.stdout.contains("Mentor told.\n"), "{}", told.stdout);
    b.goto(&format!("http://127.0.0.1:{port}/#study-session"));
    b.until(
        "the drill notice and the practice_check block in the mentor's echo",
        "const log = document.getElementById('acp-log').innerText; return log.includes('[drill_started] data from StudyLoop Labs') && log.includes('[practice_check] data from a StudyLoop drill')",
    );

    // Cancel drill from Labs.
    b.goto(&console_url(port, "labs"));
    b.click("[data-testid=labs-cancel]");
    b.until(
        "Start drill offered again",
        "const s = document.querySelector('[data-testid=labs-start]'); return document.body.dataset.drillSession === 'cancelled' && s && !s.hidden",
    );
    let status = b.text("[data-testid=labs-drill-status]");
    assert!(
        status.contains("Drill cancelled. Mentor told. The study session keeps running"),
        "{status}"
    );
    let st = state(port);
    assert_eq!(
        (
            st["active"].clone(),
            st["drill"].clone(),
            st["study_session_id"].clone()
        ),
        (json!(true), Value::Null, first)
    );
    drop(b);
    http(port, "POST", "/api/session/end", Some(&json!({})));
}

/// The `studyloop web` child, killed when the test ends, a failing one too.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
