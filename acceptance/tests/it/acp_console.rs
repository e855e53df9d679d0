//! The ACP client side of the web console as the learner sees it (issue 27,
//! items 7-12): real `studyloop web`, real headless Chromium, and
//! `studyloop-stub-acp` (a test double) scripted by its `STUB_ACP_*` knobs.
//! Each test reads what the page shows (text, order, enabled state) and, where
//! the claim is about the wire, the stub's log of what the client sent.

use std::time::Duration;

use serde_json::Value;
use studyloop_acceptance::web_acp::browser::Browser;
use studyloop_acceptance::web_acp::http;

use super::web_acp_browser::acp_console_with;

const T: Duration = Duration::from_secs(30);

/// The console entries at level `SEVERE` (errors) gathered since the last read.
fn console_errors(chrome: &Browser) -> Vec<Value> {
    chrome
        .console_log()
        .expect("console log")
        .into_iter()
        .filter(|e| e["level"] == "SEVERE")
        .collect()
}

/// Issue 27 item 12: `/favicon.ico` was a 404, one console error per page load.
#[test]
fn a_page_load_logs_no_console_error_in_chromium() {
    let (scratch, mut server, chrome, base) = acp_console_with(&[], false);
    for load in 0..2 {
        chrome
            .goto(&format!("{base}/#dashboard"))
            .expect("dashboard");
        chrome
            .wait_for("body[data-agent-resolved] #start-form:not([hidden])", T)
            .expect("dashboard ready");
        // The icon is fetched after the load event: give it time to fail.
        std::thread::sleep(Duration::from_millis(1500));
        let errors = console_errors(&chrome);
        assert_eq!(errors, Vec::<Value>::new(), "page load {load}");
    }
    let icon = http::request(&server.addr, "GET", "/favicon.ico", None, T).expect("icon");
    assert_eq!(icon.status, 200, "{}", icon.text);
    assert!(icon.text.starts_with("<svg"), "{}", icon.text);
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}
