//! The browser side of the UAT journeys that drive the SPA themselves (the plan doors):
//! headless Chromium in the case's browser slot (the acceptance crate's `Browser`, so a
//! Ctrl-C stops it and the finish step closes it), a screenshot and the page HTML per
//! step into the bundle (`browser/NN-name.png|html`), and a request trace recorded in
//! the page.
//!
//! The trace: before an action, [`INSTALL_TRACE`] wraps `window.fetch` so every call's
//! method, URL and body is logged; [`read_trace`] returns that log together with the
//! browser's own Resource Timing entries (every network request the page made,
//! whoever made it). A count of requests is then read from both, not guessed.

use serde_json::Value;
use studyloop_acceptance::case::{Case, StepFailure, Steps};
use studyloop_acceptance::web_acp::browser::{self, Browser};
use studyloop_acceptance::web_acp::journey::Snapshots;

use super::web::errored;

/// Wraps `fetch` once per page load; idempotent.
pub const INSTALL_TRACE: &str = r"
if (!window.__uatTrace) {
  window.__uatTrace = [];
  const inner = window.fetch.bind(window);
  window.fetch = function (input, init) {
    const url = typeof input === 'string' ? input : (input && input.url) || String(input);
    const method = ((init && init.method) || (input && input.method) || 'GET').toUpperCase();
    const body = init && typeof init.body === 'string' ? init.body : null;
    window.__uatTrace.push({method: method, url: new URL(url, location.href).pathname, body: body});
    return inner(input, init);
  };
}
performance.setResourceTimingBufferSize(10000);
";

/// The page's trace: `{fetches: [{method, url, body}], resources: [{path, initiator}]}`.
const READ_TRACE: &str = r"
return {
  fetches: window.__uatTrace || [],
  resources: performance.getEntriesByType('resource')
    .map(e => ({path: new URL(e.name).pathname, initiator: e.initiatorType})),
};
";

/// The `launch-browser` step: headless Chromium with a profile in the scratch tree.
///
/// # Errors
/// Chromium or chromedriver missing (naming the install command), or no session.
pub fn launch(c: &mut Case<'_>) -> Result<(), StepFailure> {
    c.step_doing(
        "launch-browser",
        "headless Chromium (chromedriver) with a profile in the scratch tree",
        |c| {
            let scratch = c.scratch()?;
            let profile = browser::profile_dir(scratch.tmp_dir()).map_err(errored)?;
            let chrome = Browser::launch(scratch, &profile).map_err(errored)?;
            c.slots.put_browser(chrome);
            Ok(())
        },
    )
}

/// Runs `f` with the browser out of its slot (its Ctrl-C watch stays) and a fresh
/// [`Snapshots`]; every snapshot goes into the bundle and the browser back into its slot
/// whatever `f` returned.
///
/// # Errors
/// No browser launched, or `f`'s own failure.
pub fn with_browser<T>(
    c: &mut Case<'_>,
    f: impl FnOnce(&mut Case<'_>, &Browser, &mut Snapshots) -> Result<T, StepFailure>,
) -> Result<T, StepFailure> {
    let chrome = c
        .slots
        .browser
        .take()
        .ok_or_else(|| StepFailure::errored("no browser launched"))?;
    let mut shots = Snapshots::default();
    let result = f(c, &chrome, &mut shots);
    // Numbered on from the shots already in the bundle, so the steps read in order.
    let before = c
        .record
        .files
        .iter()
        .filter(|(n, _)| n.starts_with("browser/") && n.ends_with(".png"))
        .count();
    for (name, bytes) in shots.files {
        c.record.attach(renumber(&name, before), bytes);
    }
    c.slots.browser = Some(chrome);
    result
}

/// `browser/NN-name.ext` as `browser/MM-name.ext` with MM = NN + `offset`.
fn renumber(name: &str, offset: usize) -> String {
    let Some(rest) = name.strip_prefix("browser/") else {
        return name.to_owned();
    };
    match rest.split_once('-') {
        Some((n, tail)) if n.bytes().all(|b| b.is_ascii_digit()) => {
            let n: usize = n.parse().unwrap_or(0);
            format!("browser/{:02}-{tail}", n + offset)
        }
        _ => name.to_owned(),
    }
}

/// Takes a screenshot and the page HTML under `name`.
///
/// # Errors
/// The browser could not capture.
pub fn shot(chrome: &Browser, shots: &mut Snapshots, name: &str) -> Result<(), StepFailure> {
    shots.take(chrome, name).map_err(errored)
}

/// The page's request trace (see the module docs).
///
/// # Errors
/// The script failed.
pub fn read_trace(chrome: &Browser) -> Result<Value, StepFailure> {
    chrome.eval(READ_TRACE, Vec::new()).map_err(errored)
}

/// The `textContent` of the first element matching `css` (`None` when absent).
///
/// # Errors
/// The script failed.
pub fn text_of(chrome: &Browser, css: &str) -> Result<Option<String>, StepFailure> {
    let v = chrome
        .eval(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;",
            vec![Value::from(css)],
        )
        .map_err(errored)?;
    Ok(v.as_str().map(str::to_owned))
}

/// How many requests of the trace were `method path`: (fetch calls, network entries).
#[must_use]
pub fn count(trace: &Value, method: &str, path: &str) -> (usize, usize) {
    let fetches = trace["fetches"].as_array().map_or(0, |a| {
        a.iter()
            .filter(|f| f["method"] == method && f["url"] == path)
            .count()
    });
    let resources = trace["resources"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|r| r["path"] == path).count());
    (fetches, resources)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn count_reads_both_the_fetch_log_and_the_network_entries() {
        let trace = json!({
            "fetches": [
                {"method": "GET", "url": "/api/session/start", "body": null},
                {"method": "POST", "url": "/api/session/start", "body": "{}"},
                {"method": "POST", "url": "/api/plans", "body": "{}"},
            ],
            "resources": [
                {"path": "/api/session/start", "initiator": "fetch"},
                {"path": "/api/session/start", "initiator": "fetch"},
                {"path": "/api/now", "initiator": "fetch"},
            ],
        });
        assert_eq!(count(&trace, "POST", "/api/session/start"), (1, 2));
        assert_eq!(count(&trace, "POST", "/api/now"), (0, 1));
        assert_eq!(count(&json!({}), "POST", "/x"), (0, 0));
    }

    #[test]
    fn later_shots_number_on_from_the_earlier_ones() {
        assert_eq!(
            renumber("browser/01-stopped.png", 3),
            "browser/04-stopped.png"
        );
        assert_eq!(renumber("browser/02-a-b.html", 0), "browser/02-a-b.html");
        assert_eq!(renumber("trace.json", 5), "trace.json");
    }
}
