//! Issue 28 item 4: `studyloop-uat report --compare OLD_RUN NEW_RUN` on two
//! runs of the real catalogue written by the project's ledger and evidence
//! writers: a trial that passed then failed is a new failure, the reverse is
//! fixed, a trial that turned flaky is newly flaky, a trial in one run only is
//! added or removed, and a harness version change is a changed pin. Bad input
//! is a clear error naming the value and the fix, exit 2.

use std::path::Path;

use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::web_acp::browser::{self, Browser};

use super::report::report;
use super::report_grid::{Plan, catalogue, catalogue_run, plan};

/// The text of the section whose heading starts with `title`.
fn section<'a>(html: &'a str, title: &str) -> &'a str {
    let start = html
        .find(&format!("</a>{title} ("))
        .unwrap_or_else(|| panic!("no section {title}: {html}"));
    let end = html[start..]
        .find("</section>")
        .map_or(html.len(), |i| start + i);
    &html[start..end]
}

#[test]
fn issue28_compare_lists_new_failures_fixed_flaky_added_removed_and_changed_pins() {
    let tmp = tempfile::tempdir().unwrap();
    let names = catalogue();
    let passed = |i: usize| plan(i) == Plan::Pass;
    // One passed trial fails in the new run; one failed trial passes; one
    // passed trial turns flaky; one codex trial is gone, one trial is new.
    let broke = (0..names.len())
        .find(|i| passed(*i) && !names[*i].contains("codex"))
        .unwrap();
    let mended = (0..names.len()).find(|i| plan(*i) == Plan::Fail).unwrap();
    let shaky = (0..names.len())
        .rev()
        .find(|i| passed(*i) && *i != broke)
        .unwrap();
    let gone = names.iter().position(|n| n == "probe::codex").unwrap();
    let old = catalogue_run(
        &tmp.path().join("runs/old"),
        |i, _| plan(i),
        "codex-cli 0.1.0",
    );
    let new = catalogue_run(
        &tmp.path().join("runs/new"),
        |i, _| match i {
            _ if i == broke => Plan::Fail,
            _ if i == mended => Plan::Pass,
            _ if i == shaky => Plan::Flaky,
            _ => plan(i),
        },
        "codex-cli 0.2.0",
    );
    // Removed from the new run, added to it: rewrite its ledger lines.
    for file in ["results.jsonl", "skip-ledger.jsonl"] {
        let path = new.dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let kept: String = text
            .lines()
            .filter(|l| !l.contains(&format!("\"trial\":\"{}\"", names[gone])))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, kept).unwrap();
    }
    new.record_skip("probe::newcomer", "a trial added since the old run")
        .unwrap();
    let out = tmp.path().join("cmp");
    let o = report(
        &[
            "--compare".as_ref(),
            old.dir().as_os_str(),
            new.dir().as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
        tmp.path(),
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("1 new failure(s), 1 fixed, 1 newly flaky"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let code = |i: usize| format!("<code>{}</code>", names[i]);
    let failures = section(&html, "New failures");
    assert!(failures.contains(&code(broke)), "{failures}");
    assert!(!failures.contains(&code(mended)), "{failures}");
    assert!(failures.contains("passed</span>") || failures.contains("passed →"));
    let fixed = section(&html, "Fixed");
    assert!(fixed.contains(&code(mended)), "{fixed}");
    assert!(!fixed.contains(&code(broke)), "{fixed}");
    let flaky = section(&html, "Newly flaky");
    assert!(flaky.contains(&code(shaky)), "{flaky}");
    let added = section(&html, "Added");
    assert!(added.contains("<code>probe::newcomer</code>"), "{added}");
    let removed = section(&html, "Removed");
    assert!(removed.contains(&code(gone)), "{removed}");
    let pins = section(&html, "Changed pins");
    assert!(pins.contains("harness codex version"), "{pins}");
    assert!(
        pins.contains("<code>codex-cli 0.1.0</code>")
            && pins.contains("<code>codex-cli 0.2.0</code>"),
        "{pins}"
    );
    // Per trial: time and fidelity old → new; an unscored fidelity stays unknown.
    let per = section(&html, "Per trial");
    assert!(per.contains("fidelity") || per.contains("Fidelity"));
    assert!(per.contains("unknown"), "{per}");
    assert!(
        !per.contains("0.000 →"),
        "an unknown fidelity shown as 0: {per}"
    );
    // A screenshot at 1280 px for a person (docs/evidence/report/).
    let scratch = Scratch::create().unwrap();
    let profile = browser::profile_dir(scratch.tmp_dir()).unwrap();
    let c = Browser::launch(&scratch, &profile).unwrap();
    c.resize(1280, 1000).unwrap();
    c.goto(&format!("file://{}", out.join("index.html").display()))
        .unwrap();
    let width = c
        .eval(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];",
            vec![],
        )
        .unwrap();
    assert!(
        width[0].as_i64() <= width[1].as_i64(),
        "the comparison overflows a 1280 px window: {width}"
    );
    let (png, _) = c.snapshot().unwrap();
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/studyloop/report-screens");
    std::fs::create_dir_all(&shots).unwrap();
    std::fs::write(shots.join("compare-1280.png"), png).unwrap();
    c.close();
}

#[test]
fn issue28_compare_refuses_what_is_not_two_distinct_run_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let a = catalogue_run(&tmp.path().join("runs/a"), |_, _| Plan::Pass, "v1");
    let not_run = tmp.path().join("plain");
    std::fs::create_dir(&not_run).unwrap();
    let file = tmp.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(a.dir(), &link).unwrap();
    let missing = tmp.path().join("missing");
    let run = a.dir();
    let cases: [(&[&Path], &str); 6] = [
        (&[&not_run, run], "OLD_RUN"),
        (&[run, &file], "it is not a directory"),
        (
            &[run, &link],
            "it is a symlink; pass the directory it points to",
        ),
        (&[run, &missing], "NEW_RUN"),
        (
            &[run, run],
            "are the same directory; pass two different runs",
        ),
        (&[run], "OLD_RUN"),
    ];
    for (args, want) in cases {
        let mut words: Vec<&std::ffi::OsStr> = vec!["--compare".as_ref()];
        words.extend(args.iter().map(|p| p.as_os_str()));
        let o = report(&words, tmp.path());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(want),
            "{args:?}: wanted {want:?} in {stderr}"
        );
        if args.len() == 2 && args[0] != args[1] {
            let bad = if args[0] == run { args[1] } else { args[0] };
            assert!(
                stderr.contains(&bad.display().to_string()),
                "{args:?}: the error names the value: {stderr}"
            );
        }
    }
    // An output directory that is a symlink is refused, not written through.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out_link = tmp.path().join("out-link");
    std::os::unix::fs::symlink(&elsewhere, &out_link).unwrap();
    let b = catalogue_run(&tmp.path().join("runs/b"), |_, _| Plan::Pass, "v2");
    let o = report(
        &[
            "--compare".as_ref(),
            run.as_os_str(),
            b.dir().as_os_str(),
            "--out".as_ref(),
            out_link.as_os_str(),
        ],
        tmp.path(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("it is a symlink"), "{stderr}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(
        String::from_utf8_lossy(
            &report(
                &["--compare".as_ref(), not_run.as_os_str(), run.as_os_str()],
                tmp.path()
            )
            .stderr
        )
        .contains("holds no run record"),
    );
}

/// `bundle`'s path as `run`'s results log names it for `trial`.
fn bundle_of(run: &Path, trial: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains(&format!("\"trial\":\"{trial}\"")))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["bundle"].as_str().unwrap().into()
}

#[test]
fn issue32_a_step_that_held_and_now_fails_is_a_broken_step_and_fails_on_breaks() {
    let tmp = tempfile::tempdir().unwrap();
    let names = catalogue();
    let old = catalogue_run(
        &tmp.path().join("runs/old"),
        |i, _| plan(i),
        "codex-cli 0.170.0",
    );
    let new = catalogue_run(
        &tmp.path().join("runs/new"),
        |i, _| plan(i),
        "codex-cli 0.171.0",
    );
    // A codex trial that passed in both runs, whose new bundle failed a step the
    // old one passed (the outcome lines agree: only the steps say what broke).
    let i = (0..names.len())
        .find(|i| plan(*i) == Plan::Pass && names[*i].contains("::codex"))
        .unwrap();
    let steps = |paste_ok: bool| {
        serde_json::json!([
            {"kind": "step", "name": "harness ready", "ok": true, "elapsed_ms": 900},
            {"kind": "step", "name": "paste arrives verbatim", "ok": paste_ok, "elapsed_ms": 40,
             "error": if paste_ok { serde_json::Value::Null } else { "the pane shows 3 lines where 1 bracketed paste was sent".into() }},
        ])
        .to_string()
    };
    std::fs::write(
        bundle_of(old.dir(), &names[i]).join("steps.json"),
        steps(true),
    )
    .unwrap();
    std::fs::write(
        bundle_of(new.dir(), &names[i]).join("steps.json"),
        steps(false),
    )
    .unwrap();
    let out = tmp.path().join("cmp");
    let args = |strict: bool| {
        let mut a = vec![
            "--compare".as_ref(),
            old.dir().as_os_str(),
            new.dir().as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ];
        if strict {
            a.push("--fail-on-breaks".as_ref());
        }
        a
    };
    let o = report(&args(false), tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(
        stdout.contains("0 new failure(s)") && stdout.contains("1 broken step(s)"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let broken = section(&html, "Broken steps");
    assert!(
        broken.contains(&format!("<code>{}</code>", names[i]))
            && broken.contains("paste arrives verbatim")
            && broken.contains("3 lines where 1 bracketed paste was sent")
            && !broken.contains("harness ready"),
        "{broken}"
    );
    let strict = report(&args(true), tmp.path());
    assert_eq!(
        strict.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&strict.stdout)
    );
    // Nothing broken: --fail-on-breaks passes.
    std::fs::write(
        bundle_of(new.dir(), &names[i]).join("steps.json"),
        steps(true),
    )
    .unwrap();
    let clean = report(&args(true), tmp.path());
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
}

#[test]
fn issue32_a_broken_step_ends_with_its_rows_to_change_and_adapter_facts_in_text_html_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let names = catalogue();
    let old = catalogue_run(
        &tmp.path().join("runs/old"),
        |i, _| plan(i),
        "codex-cli 0.171.0",
    );
    let new = catalogue_run(
        &tmp.path().join("runs/new"),
        |i, _| plan(i),
        "codex-cli 0.172.0",
    );
    let i = (0..names.len())
        .find(|i| plan(*i) == Plan::Pass && names[*i].starts_with("cli-tmux::codex"))
        .unwrap();
    // The new version's TUI never shows its ready marker; its record check
    // also failed one check (the persona row), another held.
    let steps = |ready: bool| {
        serde_json::json!([
            {"kind": "step", "name": "harness binary and version", "ok": true, "elapsed_ms": 10},
            {"kind": "step", "name": "harness ready", "ok": ready, "elapsed_ms": 900,
             "error": if ready { serde_json::Value::Null } else { "tmux session of pane %0 ended (exit) while waiting for the ready marker".into() }},
            {"kind": "step", "name": "conversation", "ok": ready, "elapsed_ms": 50,
             "error": if ready { serde_json::Value::Null } else { "the session s.jsonl holds 0 learner turns, not turn 1 (the harness did not store it, or a resume started a new session); the first record that no longer parses as the pinned schema, line 4: {\"type\":\"message\",\"message\":{\"role\":\"user\",\"parts\":[]}}: if the harness changed its store, change its reader (acceptance/src/transcript/store.rs)".into() }},
            {"kind": "check", "name": "the first session's record", "ok": ready, "elapsed_ms": 5,
             "checks": [
                {"name": "db: study_sessions row with persona_hash", "ok": ready, "elapsed_ms": 1},
                {"name": "doctor --json (read-only)", "ok": true, "elapsed_ms": 1},
             ]},
        ])
        .to_string()
    };
    std::fs::write(
        bundle_of(old.dir(), &names[i]).join("steps.json"),
        steps(true),
    )
    .unwrap();
    std::fs::write(
        bundle_of(new.dir(), &names[i]).join("steps.json"),
        steps(false),
    )
    .unwrap();
    let out = tmp.path().join("cmp");
    let o = report(
        &[
            "--compare".as_ref(),
            old.dir().as_os_str(),
            new.dir().as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
        tmp.path(),
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    let line = format!(
        "row to change: {}: `harness ready` (ready marker): harness table: acceptance/src/harness_spec/table.rs: SPECS[codex].markers.ready, ready_timeout; product: product/studyloop/src/adapters/table.rs: ADAPTERS[codex].fresh",
        names[i]
    );
    assert!(stdout.contains(&line), "{stdout}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let rows = section(&html, "Rows to change");
    assert!(
        rows.contains("<code>acceptance/src/harness_spec/table.rs: SPECS[codex].markers.ready, ready_timeout</code>")
            && rows.contains("<code>product/studyloop/src/adapters/table.rs: ADAPTERS[codex].fresh</code>"),
        "{rows}"
    );
    let facts = section(&html, "Adapter facts");
    assert!(
        facts.contains("<code>codex-cli 0.172.0</code> → 0.172.0"),
        "{facts}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    let broken = &json["broken_steps"][0];
    assert_eq!(broken["trial"], names[i].as_str());
    assert_eq!(broken["rows"][0]["fact"], "ready-marker");
    assert_eq!(
        broken["rows"][0]["harness_spec"],
        "acceptance/src/harness_spec/table.rs: SPECS[codex].markers.ready, ready_timeout"
    );
    let fact = |f: &str| {
        json["adapter_facts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["harness"] == "codex" && x["fact"] == f)
            .cloned()
    };
    let ready = fact("ready-marker").unwrap();
    assert_eq!(
        (ready["old"].as_str(), ready["new"].as_str()),
        (Some("held"), Some("broke")),
        "{ready}"
    );
    assert!(
        ready["evidence"]
            .as_str()
            .unwrap()
            .contains("waiting for the ready marker")
    );
    let persona = fact("persona-placement").unwrap();
    assert_eq!(persona["new"], "broke", "{persona}");
    // Nothing recorded an MCP step: unknown, absent from the facts, never held.
    assert!(fact("mcp-config").is_none(), "{json}");
    assert!(
        json["not_recorded"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["new"].is_null())
    );
    let store = &json["unparsable_store_records"][0];
    assert_eq!(store["trial"], names[i].as_str());
    assert_eq!(
        store["record"],
        "line 4: {\"type\":\"message\",\"message\":{\"role\":\"user\",\"parts\":[]}}"
    );
    assert!(
        facts.contains("session store: first record that no longer parses"),
        "{facts}"
    );
    let v = &json["versions"].as_array().unwrap()[0];
    assert_eq!(
        (v["old_parsed"].as_str(), v["new_parsed"].as_str()),
        (Some("0.171.0"), Some("0.172.0"))
    );
}
