//! Issue 28 item 2: the index of a run as large as the real acceptance
//! catalogue (52 trials, every surface and harness) fits the window in real
//! Chromium at 1280 and 390 px (no horizontal overflow of the page, no token
//! broken across lines in the trials table), and its filters and search work
//! (and with scripts disabled every row is there).

use std::path::{Path, PathBuf};
use std::time::Duration;

use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{
    FailureCategory, ResultMeta, RunLog, ShardRecord, TrialOutcome,
};
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::selection::Selection;
use studyloop_acceptance::web_acp::browser::{self, Browser};

/// The real acceptance catalogue's trial names, sorted.
pub(crate) fn catalogue() -> Vec<String> {
    let mut names: Vec<String> =
        studyloop_acceptance::catalogue::acceptance(&Selection::defaults())
            .iter()
            .map(|s| s.name().to_owned())
            .collect();
    names.sort();
    names
}

/// How a fixture trial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    Pass,
    Fail,
    Flaky,
    Skip,
}

/// The default plan of the `i`-th trial: a few failures and flaky trials,
/// a third skipped (as a run with some harnesses missing), the rest passed.
pub(crate) fn plan(i: usize) -> Plan {
    match i {
        _ if i.is_multiple_of(13) => Plan::Fail,
        _ if i % 11 == 5 => Plan::Flaky,
        _ if i % 3 == 1 => Plan::Skip,
        _ => Plan::Pass,
    }
}

const FAIL: &str = "step `harness ready`: the pane showed no prompt within 120 s (screens/turn-1.txt holds the last screen; rerun with STUDYLOOP_ACC_KEEP=1)";
const SKIP: &str = "STUDYLOOP_ACC_HARNESSES leaves this harness out: it is not installed (docs/run-the-matrix.md#acceptance-tier; run `just harnesses`)";

/// A lane bundle for `trial` whose manifest records `version` of its harness.
fn bundle(root: &Path, trial: &str, harness: &str, version: &str) -> PathBuf {
    let run_id = RunId::generate();
    let surface = match trial.split("::").next() {
        Some("probe") => Surface::Probe,
        Some("cli-tmux") => Surface::CliTmux,
        Some("mcp") => Surface::Mcp,
        Some("web-acp-browser") => Surface::WebAcpBrowser,
        _ => Surface::WebAcp,
    };
    let mut m = Manifest::new(&run_id, Tier::Acceptance, trial, surface);
    m.harness = Some(harness.to_owned());
    m.harness_version = Some(version.to_owned());
    m.outcome = Outcome::Completed;
    BundleWriter::create(root.join(run_id.as_str()), m)
        .unwrap()
        .finish()
        .unwrap()
}

/// A run directory at `dir` holding every catalogue trial, each ended as
/// `plan_of` says, written with the project's ledger writer; trials whose
/// harness is codex carry a bundle recording `codex_version`.
pub(crate) fn catalogue_run(
    dir: &Path,
    plan_of: impl Fn(usize, &str) -> Plan,
    codex_version: &str,
) -> RunLog {
    let run = RunLog::open(dir).unwrap();
    // The acceptance runner's shard record, as `just testacc` leaves it.
    run.record_shard(&ShardRecord {
        run: run.key().to_owned(),
        tier: "acceptance".into(),
        partition: None,
        catalogue: catalogue(),
        owned: catalogue(),
        rerun_of: None,
    })
    .unwrap();
    for (i, trial) in catalogue().iter().enumerate() {
        let meta = |attempt, ms, category| ResultMeta {
            attempt: Some(attempt),
            elapsed_ms: Some(ms),
            category,
        };
        let ms = 800 + (i as u64) * 137;
        let b = trial
            .contains("::codex")
            .then(|| bundle(&run.dir().join("evidence"), trial, "codex", codex_version));
        let ready = Some(FailureCategory::Ready);
        match plan_of(i, trial) {
            Plan::Pass => run
                .record_result_meta(
                    trial,
                    TrialOutcome::Passed,
                    None,
                    b.as_deref(),
                    None,
                    meta(1, ms, None),
                )
                .unwrap(),
            Plan::Fail => run
                .record_result_meta(
                    trial,
                    TrialOutcome::Failed,
                    Some(FAIL),
                    b.as_deref(),
                    None,
                    meta(1, ms, ready),
                )
                .unwrap(),
            Plan::Flaky => {
                run.record_result_meta(
                    trial,
                    TrialOutcome::Failed,
                    Some(FAIL),
                    b.as_deref(),
                    None,
                    meta(1, ms, ready),
                )
                .unwrap();
                run.record_result_meta(
                    trial,
                    TrialOutcome::Passed,
                    None,
                    b.as_deref(),
                    None,
                    meta(2, ms, None),
                )
                .unwrap();
            }
            Plan::Skip => run.record_skip(trial, SKIP).unwrap(),
        }
    }
    run
}

/// The report of a 52-trial catalogue run, built by the real binary.
fn site(tmp: &Path) -> PathBuf {
    let run = catalogue_run(&tmp.join("runs/run-52"), |i, _| plan(i), "codex-cli 0.1.0");
    super::report::site(run.dir(), tmp)
}

fn chrome(scratch: &Scratch) -> Browser {
    if let Err(e) = browser::available() {
        panic!("the layout test needs Chromium and chromedriver: {e}");
    }
    let profile = browser::profile_dir(scratch.tmp_dir()).unwrap();
    Browser::launch(scratch, &profile).unwrap()
}

/// Resizes the window so the page's viewport is `width` CSS px wide.
fn viewport(c: &Browser, width: u32) {
    c.resize(width, 900).unwrap();
    // Whatever the window adds around the viewport, taken off again.
    let inner = c.eval("return window.innerWidth;", vec![]).unwrap();
    let extra = i64::from(width) - inner.as_i64().unwrap();
    if extra > 0 {
        c.resize(width + u32::try_from(extra).unwrap(), 900)
            .unwrap();
    }
}

/// (scrollWidth, viewport width, the tokens of the page's visible text split
/// across line boxes). A token is a run of non-space characters. Inside a
/// table cell's `<code>` (trial ids, surfaces) it must sit on one line; in
/// other text a hyphenated compound may wrap after a hyphen, as browsers wrap
/// by default, but no piece between hyphens may split (the old index broke
/// "pas sed", "unk now n" with `overflow-wrap:anywhere`).
const MEASURE: &str = r"
var broken = [];
function lines(node, from, to) {
  var range = document.createRange();
  range.setStart(node, from);
  range.setEnd(node, to);
  var tops = {};
  var rects = range.getClientRects();
  for (var i = 0; i < rects.length; i++) {
    if (rects[i].width > 0) { tops[Math.round(rects[i].top)] = 1; }
  }
  return Object.keys(tops).length;
}
var walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
var node;
while ((node = walker.nextNode())) {
  var el = node.parentElement;
  // Visually hidden text (a glyph's details until hover or focus) has no lines.
  if (el.closest('.tip, .sr')) { continue; }
  var whole = el.closest('td code, th code') !== null;
  var re = /\S+/g, m;
  while ((m = re.exec(node.data))) {
    if (whole) {
      if (lines(node, m.index, m.index + m[0].length) > 1) { broken.push(m[0]); }
      continue;
    }
    var piece = /[^-]+-?|-/g, p;
    while ((p = piece.exec(m[0]))) {
      var from = m.index + p.index;
      if (lines(node, from, from + p[0].length) > 1) {
        broken.push(m[0] + ' at ' + p[0]);
      }
    }
  }
}
return [document.documentElement.scrollWidth, document.documentElement.clientWidth, broken];
";

#[test]
fn issue28_the_index_of_a_52_trial_run_fits_1280_and_390_px_without_broken_words() {
    let tmp = tempfile::tempdir().unwrap();
    let out = site(tmp.path());
    let scratch = Scratch::create().unwrap();
    let c = chrome(&scratch);
    // Screenshots (and the site, to look at) for a person.
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/studyloop/report-screens");
    std::fs::create_dir_all(&shots).unwrap();
    let kept = shots.join("site-52");
    let _ = std::fs::remove_dir_all(&kept);
    let copied = std::process::Command::new("cp")
        .arg("-R")
        .arg(&out)
        .arg(&kept)
        .status()
        .unwrap();
    assert!(copied.success());
    let mut failures = Vec::new();
    for width in [1280, 390] {
        c.goto(&format!("file://{}", out.join("index.html").display()))
            .unwrap();
        viewport(&c, width);
        let m = c.eval(MEASURE, vec![]).unwrap();
        let (scroll, client) = (m[0].as_i64().unwrap(), m[1].as_i64().unwrap());
        let broken = m[2].as_array().unwrap();
        let (png, _) = c.snapshot().unwrap();
        std::fs::write(shots.join(format!("index-{width}.png")), png).unwrap();
        eprintln!(
            "at {width} px: page {scroll} px wide in a {client} px viewport; {} token(s) broken",
            broken.len()
        );
        assert!(
            client <= i64::from(width) && client > i64::from(width) - 40,
            "the viewport is {client} px, not {width}"
        );
        if scroll > client {
            failures.push(format!(
                "at {width} px the page is {scroll} px wide: it overflows the {client} px viewport"
            ));
        }
        // The grid is compact: it fits the window, with no scrolling in its box.
        let grid = c
            .eval(
                "var g = document.querySelector('table.grid'); return [Math.ceil(g.getBoundingClientRect().width), g.parentElement.clientWidth];",
                vec![],
            )
            .unwrap();
        eprintln!(
            "at {width} px: the grid is {} px wide in a {} px box",
            grid[0], grid[1]
        );
        if grid[0].as_i64() > grid[1].as_i64() {
            failures.push(format!(
                "at {width} px the grid is {} px wide in a {} px box: it scrolls",
                grid[0], grid[1]
            ));
        }
        if !broken.is_empty() {
            failures.push(format!(
                "at {width} px these tokens break across lines: {broken:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The grid at 1280 px with a failed trial's glyph focused (Tab): its
    // details are on screen, and they name the trial.
    viewport(&c, 1280);
    let tip = c
        .eval(
            "var a = document.querySelector('table.grid td.failed a.g'); a.scrollIntoView({block: 'center'}); a.focus(); var t = a.querySelector('.tip'); var r = t.getBoundingClientRect(); return [t.textContent, r.width, r.height];",
            vec![],
        )
        .unwrap();
    assert!(
        tip[0].as_str().unwrap().contains(": failed; time "),
        "{tip}"
    );
    assert!(
        tip[1].as_f64().unwrap() > 300.0 && tip[2].as_f64().unwrap() > 10.0,
        "the focused glyph's details are not shown: {tip}"
    );
    let (png, _) = c.snapshot().unwrap();
    std::fs::write(shots.join("grid-focused-1280.png"), png).unwrap();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        index.matches("<tr data-status=").count(),
        52,
        "one row per trial"
    );
    // A pair not in this run: an empty cell with its text alternative.
    assert!(
        index.contains("<td class=\"none\"><span class=\"sr\">not in this run</span></td>"),
        "{index}"
    );
    for (name, kind) in [("failed-cell", "failed"), ("flaky-cell", "flaky")] {
        let href = c
            .eval(
                &format!(
                    "return document.querySelector('#trials-table tr[data-status={kind}] a').href;"
                ),
                vec![],
            )
            .unwrap();
        c.goto(href.as_str().unwrap()).unwrap();
        let (png, _) = c.snapshot().unwrap();
        std::fs::write(shots.join(format!("{name}-1280.png")), png).unwrap();
        c.goto(&format!("file://{}", out.join("index.html").display()))
            .unwrap();
    }
    c.close();
}

fn visible_rows(c: &Browser) -> Vec<String> {
    c.eval(
        "return Array.prototype.slice.call(document.querySelectorAll('#trials-table tbody tr')).filter(function (r) { return r.offsetParent !== null; }).map(function (r) { return r.getAttribute('data-status') + ' ' + r.querySelector('code').textContent; });",
        vec![],
    )
    .unwrap()
    .as_array()
    .unwrap()
    .iter()
    .map(|v| v.as_str().unwrap().to_owned())
    .collect()
}

#[test]
fn issue28_the_index_filters_by_status_and_search_and_is_whole_without_scripts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = site(tmp.path());
    let page = out.join("index.html");
    let failed = (0..52).filter(|i| plan(*i) == Plan::Fail).count();
    let scratch = Scratch::create().unwrap();
    let c = chrome(&scratch);
    c.goto(&format!("file://{}", page.display())).unwrap();
    c.wait_for("#filter-status", Duration::from_secs(10))
        .unwrap();
    assert_eq!(visible_rows(&c).len(), 52, "every row before filtering");
    // As a person does: pick "failed" in the status list.
    c.click("#filter-status").unwrap();
    c.click("#filter-status option[value=failed]").unwrap();
    let rows = visible_rows(&c);
    assert_eq!(rows.len(), failed, "{rows:?}");
    assert!(rows.iter().all(|r| r.starts_with("failed ")), "{rows:?}");
    let count = c
        .eval(
            "return document.getElementById('filter-count').textContent;",
            vec![],
        )
        .unwrap();
    assert_eq!(count, format!("{failed} of 52 trials shown").as_str());
    // The state is in the URL hash: the filtered view opens as it was left.
    let hash = c.eval("return location.hash;", vec![]).unwrap();
    assert_eq!(hash, "#status=failed");
    c.goto(&format!("file://{}#status=flaky", page.display()))
        .unwrap();
    c.eval("location.reload();", vec![]).unwrap();
    c.wait_for("#filter-status", Duration::from_secs(10))
        .unwrap();
    let rows = visible_rows(&c);
    let flaky = (0..52).filter(|i| plan(*i) == Plan::Flaky).count();
    assert_eq!(rows.len(), flaky, "{rows:?}");
    assert!(rows.iter().all(|r| r.starts_with("flaky ")), "{rows:?}");
    // Back to every status, then type a search: the matching rows only.
    c.click("#filter-status option[value='']").unwrap();
    c.fill("#filter-text", "::paste").unwrap();
    let rows = visible_rows(&c);
    let pastes = catalogue().iter().filter(|t| t.contains("::paste")).count();
    assert!(pastes > 1);
    assert_eq!(rows.len(), pastes, "{rows:?}");
    assert!(rows.iter().all(|r| r.contains("::paste")), "{rows:?}");
    c.close();
    // With the page's scripts disabled: no controls, every row shown.
    let scratch = Scratch::create().unwrap();
    let profile = browser::profile_dir(scratch.tmp_dir()).unwrap();
    let c = Browser::launch_without_page_scripts(&scratch, &profile).unwrap();
    c.goto(&format!("file://{}", page.display())).unwrap();
    c.wait_for("#trials-table", Duration::from_secs(10))
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let controls = c
        .eval(
            "return document.querySelectorAll('#filters *').length;",
            vec![],
        )
        .unwrap();
    assert_eq!(controls, serde_json::json!(0), "the page's script ran");
    assert_eq!(visible_rows(&c).len(), 52, "every row without scripts");
    c.close();
}
