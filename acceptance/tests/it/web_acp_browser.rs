//! The SPA in real headless Chromium against the real `studyloop web`, with
//! `studyloop-stub-acp` (a test double) as the agent: start from the
//! Dashboard, persona delivered by the console, two typed turns, end. Needs
//! `cargo build --bins` and Chromium (`just deps-browser`); without Chromium
//! it fails naming the install command rather than passing silently.

use std::ffi::OsString;
use std::time::Duration;

use serde_json::json;
use studyloop_acceptance::bins;
use studyloop_acceptance::door::SessionState;
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::web_acp::browser::{self, Browser};
use studyloop_acceptance::web_acp::journey::{self, BrowserMentor, Snapshots};
use studyloop_acceptance::web_acp::{WebServer, http};
use studyloop_actors::Mentor;

const T: Duration = Duration::from_secs(30);

/// Chromium present (else a loud failure naming the fix), the built `studyloop`,
/// and a fresh scratch world with its config initialised: (binary, world).
fn configured_world() -> (std::path::PathBuf, Scratch) {
    if let Err(e) = browser::available() {
        panic!("{e}");
    }
    let studyloop = bins::path("studyloop").expect("cargo build --bins");
    let scratch = Scratch::create().expect("scratch world");
    let mut init = scratch.command(&studyloop);
    init.args(["config", "init", "--force"]);
    assert_eq!(
        scratch
            .run(&mut init, T)
            .expect("config init")
            .status
            .code(),
        Some(0)
    );
    (studyloop, scratch)
}

/// A fresh scratch world with `studyloop web` whose ACP agent is
/// `studyloop-stub-acp` (scripted by the `STUB_ACP_*` `knobs`) and a headless
/// Chromium: (world, server, browser, base URL).
fn acp_console(knobs: &[(&str, String)]) -> (Scratch, WebServer, Browser, String) {
    acp_console_with(knobs, false)
}

/// As [`acp_console`]; `traced` keeps Chromium's network log.
pub(crate) fn acp_console_with(
    knobs: &[(&str, String)],
    traced: bool,
) -> (Scratch, WebServer, Browser, String) {
    let (studyloop, scratch) = configured_world();
    let stub = bins::path("studyloop-stub-acp").expect("cargo build --bins");
    let mut extra = vec![(
        OsString::from("STUDYLOOP_TEST_ACP_CMD"),
        OsString::from(format!("'{}'", stub.display())),
    )];
    extra.extend(
        knobs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    let server = WebServer::start(&scratch, &studyloop, &extra).expect("server up");
    let base = format!("http://{}", server.addr);
    let profile = browser::profile_dir(scratch.tmp_dir()).expect("profile dir");
    let chrome = if traced {
        Browser::launch_traced(&scratch, &profile)
    } else {
        Browser::launch(&scratch, &profile)
    }
    .expect("chromium starts");
    (scratch, server, chrome, base)
}

#[test]
fn dashboard_start_persona_two_turns_and_end_in_chromium() {
    let (scratch, mut server, chrome, base) = acp_console(&[]);
    let mut shots = Snapshots::default();
    journey::start_acp_session(&chrome, &mut shots, &base, ("Ownership", "codex", false), T)
        .expect("started");
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);
    for (n, q) in [(2, "what moves?"), (3, "what copies?")] {
        let reply = mentor.send(q).expect("turn");
        assert_eq!(reply.text, format!("STUB-ACP-ECHO {n}: {q}"));
    }
    mentor.end().expect("ended from the console");
    let label = chrome.eval(
        "return document.querySelector('[data-testid=console-purpose-label]').textContent",
        Vec::new(),
    );
    let shots = mentor.shots;
    chrome.close();
    assert_eq!(label.expect("label"), json!("Study session — study mentor"));
    assert!(
        shots.files.len() >= 8,
        "a screenshot and HTML per step: {}",
        shots.files.len()
    );
    assert!(
        shots
            .files
            .iter()
            .any(|(n, b)| n.ends_with(".png") && b.starts_with(b"\x89PNG"))
    );
    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    assert!(
        SessionState::from(state.result().clone()).is_ended(),
        "{}",
        state.text
    );
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// The Plans door: subject + "Plan with architect" starts one planning PTY
/// session; the console shows the terminal and the purpose label, which
/// survives a reload.
#[test]
fn plan_architect_starts_a_planning_pty_session_whose_label_survives_reload() {
    let (studyloop, scratch) = configured_world();
    // A stand-in `pi` so the picker resolves an agent; the hatch replaces its launch.
    let bin = scratch.tmp_dir().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    std::fs::write(bin.join("pi"), "#!/bin/sh\nexit 0\n").expect("fake pi");
    std::fs::set_permissions(
        bin.join("pi"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let extra = vec![
        (OsString::from("PATH"), OsString::from(path)),
        (OsString::from("STUDYLOOP_AGENT"), OsString::from("pi")),
        (
            OsString::from("STUDYLOOP_TEST_AGENT_CMD"),
            OsString::from("echo agent-stub-ready; exec cat"),
        ),
    ];
    let mut server = WebServer::start(&scratch, &studyloop, &extra).expect("server up");
    let base = format!("http://{}", server.addr);
    let profile = browser::profile_dir(scratch.tmp_dir()).expect("profile dir");
    let chrome = Browser::launch(&scratch, &profile).expect("chromium starts");
    let mut shots = Snapshots::default();
    chrome.goto(&format!("{base}/#study-plans")).expect("plans");
    chrome
        .wait_for(
            "body[data-plans-ready][data-agent-resolved='true'] [data-testid='plan-architect']",
            T,
        )
        .expect("plans view ready");
    chrome
        .fill(
            "[data-testid='plan-architect-subject']",
            "SQL window functions",
        )
        .expect("subject");
    chrome
        .click("[data-testid='plan-architect']")
        .expect("click");
    chrome
        .wait_for("#agent-console[data-connected='true'][data-mode='pty']", T)
        .expect("pty console");
    let screen = "return document.getElementById('pty-screen').textContent";
    let deadline = std::time::Instant::now() + T;
    while !chrome
        .eval(screen, Vec::new())
        .expect("screen")
        .as_str()
        .unwrap_or_default()
        .contains("agent-stub-ready")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no PTY output in the console"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    shots.take(&chrome, "architect-console").expect("shot");
    let label = "return document.querySelector('[data-testid=console-purpose-label]').textContent";
    assert_eq!(
        chrome.eval(label, Vec::new()).expect("label"),
        json!("Planning session — study-plan architect")
    );
    chrome.eval("location.reload()", Vec::new()).ok();
    chrome
        .wait_for("#agent-console[data-connected='true'][data-mode='pty']", T)
        .expect("reattached");
    assert_eq!(
        chrome.eval(label, Vec::new()).expect("label"),
        json!("Planning session — study-plan architect")
    );
    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    let state = SessionState::from(state.result().clone());
    assert_eq!(
        (state.purpose(), state.topic()),
        (Some("planning"), Some("SQL window functions"))
    );
    assert!(!state.has_plan());
    chrome.click("#console-stop").expect("end");
    chrome
        .wait_for("#agent-console[data-stopped='true']", T)
        .expect("stopped");
    chrome.close();
    assert!(!shots.files.is_empty());
    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    assert!(
        SessionState::from(state.result().clone()).is_ended(),
        "{}",
        state.text
    );
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// Agent text that tries every way into the page: script, event handlers,
/// `javascript:` and `data:` links, CSS (a `<style>` and a `style` attribute),
/// SVG, MathML mutation XSS, frames, forms, and remote fetches (an `<img>`, a
/// Markdown image, a stylesheet) aimed at a listener that counts connections.
fn hostile_reply(port: u16) -> String {
    let u = format!("http://127.0.0.1:{port}");
    [
        "HOSTILE-REPLY <script>window.__pwned = 'script'</script>".to_owned(),
        String::new(),
        format!("<img src=\"{u}/img\" onerror=\"window.__pwned='img'\">"),
        String::new(),
        "[click me](javascript:window.__pwned='link') and [data](data:text/html,<script>x</script>)".to_owned(),
        String::new(),
        "<a href=\"javascript:window.__pwned='a'\">raw link</a> [fine link](https://example.invalid/ok)".to_owned(),
        String::new(),
        format!("<style>body {{ background: url({u}/css) red }} .acp-log {{ display: none }}</style>"),
        format!("<link rel=\"stylesheet\" href=\"{u}/link\">"),
        "<svg onload=\"window.__pwned='svg'\"><script>window.__pwned='svg2'</script></svg>".to_owned(),
        format!("<iframe src=\"{u}/frame\"></iframe>"),
        String::new(),
        format!("![track]({u}/track.png)"),
        String::new(),
        "<div style=\"position:fixed;inset:0;background:red\" onclick=\"window.__pwned='div'\">overlay</div>".to_owned(),
        format!("<form action=\"{u}/form\"><button>go</button></form>"),
        "<math><mtext><table><mglyph><style><img src=x onerror=\"window.__pwned='mxss'\">".to_owned(),
        String::new(),
        "```\"><img src=x onerror=window.__pwned='lang'>".to_owned(),
        "<b onmouseover=\"window.__pwned='code'\">in code</b>".to_owned(),
        "```".to_owned(),
    ]
    .join("\n")
}

/// ACP `agent_message_chunk` updates carrying `text` in uneven pieces that
/// split words and tags (`<scr` + `ipt>`), as a streaming model would.
fn chunked(text: &str) -> Vec<serde_json::Value> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(7)
        .map(|c| {
            json!({"sessionUpdate": "agent_message_chunk",
                   "content": {"type": "text", "text": c.iter().collect::<String>()}})
        })
        .collect()
}

/// The conversation view renders the mentor's Markdown (heading, list,
/// emphasis, highlighted code, a long line wrapped) and no hostile reply can
/// inject markup, script, style or a remote request; screenshots are kept.
#[test]
fn mentor_markdown_renders_and_hostile_replies_cannot_inject_in_chromium() {
    // Counts every connection a hostile URL might cause.
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("listener");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let markdown = studyloop_stubs::realistic_reply(7, 2, Some("what moves?"), None);
    let hostile = hostile_reply(port);
    let persona = vec![json!({"sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "persona ok"}})];
    let seq = json!([persona, chunked(&markdown), chunked(&hostile)]);

    let (scratch, mut server, chrome, base) =
        acp_console(&[("STUB_ACP_PROMPT_UPDATES_SEQ", seq.to_string())]);
    let mut shots = Snapshots::default();
    journey::start_acp_session(&chrome, &mut shots, &base, ("Ownership", "codex", false), T)
        .expect("started");
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);

    let shown = mentor.send("what moves?").expect("markdown turn").text;
    assert!(
        shown.starts_with(&markdown[..markdown.find('\n').unwrap()]),
        "{shown}"
    );
    let rendered = chrome
        .eval(
            "const m = [...document.querySelectorAll('.acp-msg[data-role=\"assistant\"]')].pop();\
             const long = [...m.querySelectorAll('p')].find(p => p.textContent.startsWith('To put it all'));\
             return {h2: m.querySelectorAll('h2').length, li: m.querySelectorAll('ul > li').length,\
               emph: m.querySelectorAll('strong, em').length, code: m.querySelectorAll('pre > code.hljs').length,\
               tokens: m.querySelectorAll('pre > code span[class^=\"hljs-\"]').length,\
               source: m.dataset.markdown, format: m.dataset.format,\
               longWraps: !!long && long.getClientRects().length > 0 && long.scrollWidth <= long.clientWidth + 1 && long.offsetHeight > 30,\
               overflow: m.scrollWidth > m.clientWidth + 1};",
            Vec::new(),
        )
        .expect("inspect markdown");
    assert_eq!(rendered["format"], "markdown", "{rendered}");
    assert_eq!(
        rendered["source"],
        markdown.as_str(),
        "the source is kept whole"
    );
    for (key, min) in [
        ("h2", 1),
        ("li", 2),
        ("emph", 1),
        ("code", 1),
        ("tokens", 1),
    ] {
        assert!(rendered[key].as_u64() >= Some(min), "{key}: {rendered}");
    }
    assert_eq!(rendered["longWraps"], true, "{rendered}");
    assert_eq!(rendered["overflow"], false, "{rendered}");

    let shown = mentor.send("try to break out").expect("hostile turn").text;
    assert!(
        shown.contains("HOSTILE-REPLY <script>"),
        "escaped, shown as text: {shown}"
    );
    let verdict = chrome
        .eval(
            "const m = [...document.querySelectorAll('.acp-msg[data-role=\"assistant\"]')].pop();\
             m.scrollIntoView({block: 'start'});\
             const all = [...m.querySelectorAll('*')];\
             return {pwned: window.__pwned || null,\
               banned: m.querySelectorAll('script,img,svg,math,style,link,iframe,frame,object,embed,form,input,button,div,b,meta,base').length,\
               handlers: all.filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,\
               styled: all.filter(e => e.hasAttribute('style')).length,\
               badLinks: [...m.querySelectorAll('a')].filter(a => !/^(https?:|mailto:)/i.test(a.getAttribute('href') || '')).length,\
               linkText: m.textContent.includes('click me') && m.textContent.includes('raw link'),\
               links: [...m.querySelectorAll('a')].map(a => [a.getAttribute('href'), a.rel]),\
               classes: all.filter(e => e.hasAttribute('class') && !(e.closest('pre'))).length,\
               bg: getComputedStyle(document.body).backgroundColor,\
               logShown: getComputedStyle(document.getElementById('acp-log')).display !== 'none',\
               remote: performance.getEntriesByType('resource').map(r => r.name).filter(n => !n.startsWith(location.origin))};",
            Vec::new(),
        )
        .expect("inspect hostile");
    mentor
        .shots
        .take(&chrome, "hostile-rendered")
        .expect("screenshot");
    assert_eq!(verdict["pwned"], serde_json::Value::Null, "{verdict}");
    for key in ["banned", "handlers", "styled", "badLinks", "classes"] {
        assert_eq!(verdict[key], 0, "{key}: {verdict}");
    }
    assert_eq!(
        verdict["links"],
        json!([["https://example.invalid/ok", "noopener noreferrer nofollow"]]),
        "{verdict}"
    );
    assert_eq!(
        verdict["linkText"], true,
        "refused links keep their text: {verdict}"
    );
    assert_eq!(verdict["bg"], "rgb(247, 248, 250)", "{verdict}");
    assert_eq!(verdict["logShown"], true, "{verdict}");
    assert_eq!(verdict["remote"], json!([]), "{verdict}");
    let connections = std::iter::from_fn(|| listener.accept().ok()).count();
    assert_eq!(connections, 0, "a hostile URL was fetched");

    mentor.end().expect("ended");
    let shots = mentor.shots;
    chrome.close();
    // Evidence: every step's screenshot and HTML, kept beside the build.
    let evidence = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-markdown");
    std::fs::create_dir_all(evidence.join("browser")).expect("evidence dir");
    for (name, bytes) in &shots.files {
        std::fs::write(evidence.join(name), bytes).expect("write evidence");
    }
    eprintln!("screenshots: {}", evidence.display());
    assert!(
        shots
            .files
            .iter()
            .any(|(n, b)| n.contains("hostile-rendered") && b.starts_with(b"\x89PNG"))
    );
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// The Plans view lists a plan, opens it, ticks its second milestone (the
/// document changes), and the Today card names the plan it advances.
#[test]
fn plans_view_ticks_a_milestone_and_today_names_the_plan_in_chromium() {
    let (studyloop, scratch) = configured_world();
    let mut server = WebServer::start(&scratch, &studyloop, &[]).expect("server up");
    let base = format!("http://{}", server.addr);
    let plan = json!({"title": "SQL windows", "plan_id": "sql-windows", "status": "active", "request_id": "browser-plan",
        "answers": {"why": "reports", "success": ["running totals"], "milestones": ["OVER clause", "Frames", "Ranking"]}});
    let r = http::request(&server.addr, "POST", "/api/plans", Some(&plan), T).expect("create");
    assert_eq!(r.status, 201, "{}", r.text);
    let profile = browser::profile_dir(scratch.tmp_dir()).expect("profile dir");
    let chrome = Browser::launch(&scratch, &profile).expect("chromium starts");
    let mut shots = Snapshots::default();
    chrome.goto(&format!("{base}/#study-plans")).expect("plans");
    chrome
        .wait_for("body[data-plans-ready] [data-testid='plan-row'] button", T)
        .expect("plan listed");
    chrome
        .click("[data-testid='plan-row'] button")
        .expect("open plan");
    chrome
        .wait_for(
            "#plan-detail:not([hidden]) [data-testid='plan-milestone'][data-index='1']",
            T,
        )
        .expect("detail");
    chrome
        .click("[data-testid='plan-milestone'][data-index='1']")
        .expect("tick");
    let deadline = std::time::Instant::now() + T;
    loop {
        let d =
            http::request(&server.addr, "GET", "/api/plans/sql-windows", None, T).expect("detail");
        if d.result()["milestone_done"] == json!(1) {
            assert_eq!(
                d.result()["milestones"][1]["done"],
                json!(true),
                "{}",
                d.text
            );
            assert!(
                d.result()["markdown"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("- [x] **Frames**")
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the tick never reached the plan: {}",
            d.text
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    shots.take(&chrome, "plans-detail").expect("shot");
    chrome.goto(&format!("{base}/#today")).expect("today");
    chrome
        .wait_for("body[data-today-ready] .today-card .today-plan", T)
        .expect("today card");
    let line = chrome
        .eval(
            "return document.querySelector('.today-card .today-plan').textContent",
            Vec::new(),
        )
        .expect("line");
    assert_eq!(
        line,
        json!("Advances plan: SQL windows — next: OVER clause")
    );
    let title = chrome
        .eval(
            "return document.querySelector('.today-card h2').textContent",
            Vec::new(),
        )
        .expect("title");
    assert_eq!(title, json!("OVER clause"));
    shots.take(&chrome, "today").expect("shot");
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}
