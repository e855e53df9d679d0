//! Issue 17: `STUDYLOOP_ACC_REPEAT` runs every trial N times through the real
//! runner glue, each attempt a results line (attempt, wall time, a failure's
//! category); the trial passes only when every attempt does (pass^k); and the
//! run directory gets a `junit.xml` whose shape a strict checker accepts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::runner::{JUNIT_FILE, TrialReport, TrialSpec, run_with_words};

/// A strict well-formedness check of the XML this crate writes (no DTDs, no
/// CDATA, no comments): every tag closed in order, every attribute quoted,
/// `&` only as one of the five entities, no raw `<` in text or values.
/// Returns each element's path, e.g. `testsuites/testsuite/testcase/failure`.
fn elements(xml: &str) -> Result<Vec<String>, String> {
    let rest = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .ok_or("no XML declaration")?;
    let entity_ok = |text: &str| {
        text.split('&').skip(1).all(|after| {
            ["amp;", "lt;", "gt;", "quot;", "#39;"]
                .iter()
                .any(|e| after.starts_with(e))
        })
    };
    let mut stack: Vec<String> = Vec::new();
    let mut paths = Vec::new();
    let mut s = rest;
    while let Some(open) = s.find('<') {
        let text = &s[..open];
        if !entity_ok(text) || text.contains('>') {
            return Err(format!("bad text {text:?}"));
        }
        let close = s[open..].find('>').ok_or("unclosed tag")? + open;
        let tag = &s[open + 1..close];
        s = &s[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop().as_deref() != Some(name) {
                return Err(format!("</{name}> closes nothing open"));
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(format!("bad element name {name:?}"));
        }
        while !attrs.trim().is_empty() {
            let (key, value) = attrs
                .trim_start()
                .split_once("=\"")
                .ok_or("unquoted attribute")?;
            let end = value.find('"').ok_or("unterminated attribute")?;
            let v = &value[..end];
            if key.contains(' ') || v.contains('<') || !entity_ok(v) {
                return Err(format!("bad attribute {key}={v:?}"));
            }
            attrs = &value[end + 1..];
        }
        stack.push(name.to_owned());
        paths.push(stack.join("/"));
        if self_closing {
            stack.pop();
        }
    }
    if !stack.is_empty() || !s.trim().is_empty() {
        return Err(format!("unclosed at the end: {stack:?}"));
    }
    Ok(paths)
}

#[test]
fn the_xml_checker_refuses_what_a_ci_parser_would() {
    let ok = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a x=\"1 &amp; 2\"><b/>t &lt;</a>\n";
    assert_eq!(elements(ok).unwrap(), ["a", "a/b"]);
    for bad in [
        "<a><b></a></b>",
        "<a x=\"<\"></a>",
        "<a>&nbsp;</a>",
        "<a>x < y</a>",
        "<a>",
    ] {
        let doc = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{bad}\n");
        assert!(elements(&doc).is_err(), "{bad}");
    }
}

#[test]
fn issue17_repeat_runs_each_trial_n_times_records_every_attempt_and_writes_junit() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_REPEAT", " 3 "),
        ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
        ("PATH", "/usr/bin:/bin"),
    ]);
    let calls = Arc::new(AtomicUsize::new(0));
    let hostile = "step `harness ready`: </failure><script>x</script> & \u{1b}[31m";
    let code = run_with_words(
        Tier::Acceptance,
        &caller,
        &["acceptance", "--test-threads=1"],
        |_| {
            let calls = Arc::clone(&calls);
            vec![
                TrialSpec::ungated("meta::steady", |_| TrialReport::passed()),
                TrialSpec::ungated("meta::wobbly", move |_| {
                    if calls.fetch_add(1, Ordering::SeqCst) == 1 {
                        TrialReport::failed(hostile)
                    } else {
                        TrialReport::passed()
                    }
                }),
                TrialSpec::ungated("meta::skipper", |_| TrialReport::skipped("no <tool> here")),
            ]
        },
    );
    assert_ne!(
        code,
        std::process::ExitCode::SUCCESS,
        "one attempt failed: pass^3 fails"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "three attempts of the wobbly trial"
    );
    let lines: Vec<Value> = std::fs::read_to_string(run.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of =
        |trial: &str| -> Vec<&Value> { lines.iter().filter(|l| l["trial"] == trial).collect() };
    let steady = of("meta::steady");
    assert_eq!(steady.len(), 3);
    for (i, l) in steady.iter().enumerate() {
        assert_eq!(l["attempt"], i + 1);
        assert!(l["elapsed_ms"].is_u64(), "{l}");
        assert!(l.get("category").is_none(), "a pass has no category: {l}");
    }
    let wobbly = of("meta::wobbly");
    let outcomes: Vec<&str> = wobbly
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["passed", "failed", "passed"]);
    assert_eq!(wobbly[1]["category"], "ready", "{}", wobbly[1]);

    let xml = std::fs::read_to_string(run.join(JUNIT_FILE)).unwrap();
    let paths = elements(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert_eq!(paths[0], "testsuites");
    assert_eq!(paths[1], "testsuites/testsuite");
    let cases = paths.iter().filter(|p| p.ends_with("/testcase")).count();
    assert_eq!(cases, 3, "{xml}");
    assert_eq!(
        paths.iter().filter(|p| p.ends_with("/failure")).count(),
        1,
        "{xml}"
    );
    assert_eq!(
        paths.iter().filter(|p| p.ends_with("/skipped")).count(),
        1,
        "{xml}"
    );
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
        "{xml}"
    );
    assert!(xml.contains("type=\"ready\""), "{xml}");
    assert!(xml.contains("attempt 2: failed"), "{xml}");
    assert!(
        xml.contains("skipped message=\"no &lt;tool&gt; here\""),
        "{xml}"
    );
    assert!(
        !xml.contains("<script>") && !xml.contains('\u{1b}'),
        "{xml}"
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(run.join(JUNIT_FILE))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
}
