//! Issue 28 item 3: the report's headline and wording, checked on the rendered
//! text. The index leads with the sign-off verdict (before any count); an
//! acceptance-only run says the sign-off does not apply instead of failing it;
//! a UAT cell page names the harness its manifest names; Markdown code spans in
//! reasons render as `<code>`; a cell with no bundle does not blame its surface.

use std::path::Path;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{ResultMeta, RunLog, TrialOutcome};
use studyloop_acceptance::runner::{TrialReport, TrialSpec, run_with_words};

use super::report::{report, site};

/// The index's text before the first `<h2>`: what a reader sees first.
fn lead(index: &str) -> &str {
    let start = index.find("<h1>").unwrap();
    let end = index[start..]
        .find("<h2")
        .map_or(index.len(), |i| start + i);
    &index[start..end]
}

#[test]
fn issue28_an_acceptance_only_run_says_the_signoff_does_not_apply_and_renders_code_spans() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
        ("PATH", "/usr/bin:/bin"),
    ]);
    let _ = run_with_words(
        Tier::Acceptance,
        &caller,
        &["acceptance", "--test-threads=1"],
        |_| {
            vec![
                TrialSpec::ungated("probe::pi", |_| TrialReport::passed()),
                TrialSpec::ungated("cli-tmux::pi", |_| {
                    TrialReport::skipped("pi not found on PATH (run `just harnesses`)")
                }),
                TrialSpec::ungated("web-acp::pi", |_| {
                    TrialReport::failed("step `harness ready`: timed out")
                }),
            ]
        },
    );
    let out = site(&run, tmp.path());
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let lead = lead(&index);
    assert!(
        lead.contains("Sign-off: not applicable: the UAT sign-off does not apply"),
        "{lead}"
    );
    assert!(
        !index.contains(">FAIL<"),
        "an acceptance run is not FAILed: {index}"
    );
    let verdict = lead.find("Sign-off:").unwrap();
    let counts = lead.find(" passed, ").unwrap();
    assert!(
        verdict < counts,
        "the verdict comes before the counts: {lead}"
    );
    // One row per trial, what needs attention first: failed, skipped, passed.
    let row = |trial: &str| {
        index
            .find(&format!("<code>{trial}</code></a></td>"))
            .unwrap_or_else(|| panic!("no row of {trial}: {index}"))
    };
    assert!(
        row("web-acp::pi") < row("cli-tmux::pi"),
        "failed before skipped"
    );
    assert!(
        row("cli-tmux::pi") < row("probe::pi"),
        "skipped before passed"
    );
    // The skip reason's code span, in the index and on the cell page.
    assert!(index.contains("<code>just harnesses</code>"), "{index}");
    let skipped = std::fs::read_to_string(out.join("cells/cli-tmux..pi.html")).unwrap();
    assert!(skipped.contains("<code>just harnesses</code>"), "{skipped}");
    assert!(!skipped.contains("`just harnesses`"), "{skipped}");
    assert!(
        !skipped.contains("a web or probe cell drives no pane"),
        "a skipped cli-tmux cell does not say its surface drives no pane: {skipped}"
    );
    assert!(skipped.contains("No bundle, so no recording"), "{skipped}");
    let failed = std::fs::read_to_string(out.join("cells/web-acp..pi.html")).unwrap();
    assert!(
        failed.contains("step <code>harness ready</code>: timed out"),
        "{failed}"
    );
}

#[test]
fn issue28_a_failed_uat_signoff_leads_the_index_and_a_cell_names_its_manifests_harness() {
    let tmp = tempfile::tempdir().unwrap();
    let run = RunLog::open(tmp.path().join("runs/run-1")).unwrap();
    let run_id = RunId::generate();
    let mut m = Manifest::new(&run_id, Tier::Uat, "journey::smoke", Surface::CliTmux);
    m.harness = Some("codex".into());
    m.outcome = Outcome::Completed;
    let w = BundleWriter::create(run.dir().join("evidence").join(run_id.as_str()), m).unwrap();
    let bundle = w.finish().unwrap();
    let meta = ResultMeta {
        attempt: Some(1),
        elapsed_ms: Some(900),
        category: None,
    };
    run.record_result_meta(
        "journey::smoke",
        TrialOutcome::Passed,
        None,
        Some(&bundle),
        None,
        meta,
    )
    .unwrap();
    let out = site(run.dir(), tmp.path());
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let lead = lead(&index);
    let verdict = lead
        .find("Sign-off: <strong class=\"FAIL\">FAIL</strong>")
        .unwrap_or_else(|| panic!("the lead names the FAIL verdict: {lead}"));
    let counts = lead.find("1 passed").unwrap();
    assert!(verdict < counts, "FAIL comes before \"1 passed\": {lead}");
    assert!(lead.contains("every reason"), "{lead}");
    let cell = std::fs::read_to_string(out.join("cells/journey..smoke.html")).unwrap();
    assert!(cell.contains("; harness codex;"), "{cell}");
    assert!(!cell.contains("harness –"), "{cell}");
}

/// A run of `tier` with one passed trial into `dir` (the real runner glue, so
/// the real shard record).
fn tiny_run(tier: Tier, dir: &Path) {
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_UAT", "1"),
        ("STUDYLOOP_ACC_RESULTS_DIR", dir.to_str().unwrap()),
        ("PATH", "/usr/bin:/bin"),
    ]);
    let label = match tier {
        Tier::Acceptance => "acceptance",
        Tier::Uat => "uat",
    };
    let _ = run_with_words(tier, &caller, &[label, "--test-threads=1"], |_| {
        vec![TrialSpec::ungated("probe::pi", |_| TrialReport::passed())]
    });
    assert!(
        dir.join(format!("shard-{label}.json")).is_file(),
        "no shard record in {}",
        dir.display()
    );
}

#[test]
fn issue28_latest_reports_the_newest_acceptance_and_the_newest_uat_run_and_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    tiny_run(Tier::Acceptance, &root.join("acc-old"));
    tiny_run(Tier::Uat, &root.join("uat-1"));
    std::thread::sleep(std::time::Duration::from_millis(20));
    tiny_run(Tier::Acceptance, &root.join("acc-new"));
    let o = report(&["--latest".as_ref(), root.as_os_str()], tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let said =
        |tier: &str, dir: &str| format!("the latest {tier} run: {}", root.join(dir).display());
    assert!(stdout.contains(&said("acceptance", "acc-new")), "{stdout}");
    assert!(stdout.contains(&said("uat", "uat-1")), "{stdout}");
    assert!(root.join("acc-new/report/index.html").is_file());
    assert!(root.join("uat-1/report/index.html").is_file());
    assert!(
        !root.join("acc-old/report").exists(),
        "the older run is not reported"
    );
    // Nothing to report on is a clear error naming the directory.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = report(&["--latest".as_ref(), empty.as_os_str()], tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("no acceptance or UAT run under"),
        "{stderr}"
    );
    assert!(stderr.contains("shard-uat.json"), "{stderr}");
}
