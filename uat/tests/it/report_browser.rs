//! Issue 17: the report as real Chromium parses it (`--headless --dump-dom`
//! from `file://`, no server): per page type the DOM holds the headings, the
//! matrix or the cell's sections, the skip link, and no script element (the
//! hostile fixture's markup arrives as text); a screenshot of each page type
//! is written to `target/studyloop/report-screens/` for a person to look at.

use std::path::Path;
use std::process::Command;

use studyloop_acceptance::web_acp::browser::{CHROMIUM, INSTALL_HINT};

fn chromium(args: &[&str], url: &Path) -> String {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is not installed; {INSTALL_HINT}"
    );
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", url.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn issue17_chromium_parses_every_page_type_with_headings_and_no_script() {
    let f = super::report::fixture();
    let site = f.tmp.path().join("site");
    let o = super::report::report(
        &[f.run.dir().as_os_str(), "--out".as_ref(), site.as_os_str()],
        f.tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/studyloop/report-screens");
    std::fs::create_dir_all(&shots).unwrap();
    let pages = [
        (
            "index",
            site.join("index.html"),
            &["Matrix: harness × surface", "UAT sign-off verdict"][..],
        ),
        (
            "cell",
            site.join("cells/cli-tmux..pi.html"),
            &[
                "Attempts",
                "Steps",
                "Transcript",
                "Stub provider requests",
                "Arbitration",
            ][..],
        ),
        (
            "skipped-cell",
            site.join("cells/probe..kiro.html"),
            &["Skip reasons"][..],
        ),
    ];
    for (kind, page, sections) in pages {
        let dom = chromium(&["--dump-dom"], &page);
        let lower = dom
            .to_lowercase()
            .replace(
                "<script src=\"../assets/player/asciinema-player.min.js\"></script>",
                "",
            )
            .replace("<script src=\"../assets/player/init.js\"></script>", "")
            .replace("<script src=\"filter.js\"></script>", "");
        assert!(lower.contains("<h1>"), "{kind}: no h1");
        assert!(dom.contains("Skip to content"), "{kind}: no skip link");
        assert!(
            !lower.contains("<script"),
            "{kind}: a script element in the parsed DOM"
        );
        assert!(
            !lower.contains("<img src=\"x\""),
            "{kind}: an injected image"
        );
        for s in sections {
            assert!(dom.contains(s), "{kind}: section {s} missing");
        }
        let png = shots.join(format!("{kind}.png"));
        let _ = std::fs::remove_file(&png);
        chromium(
            &[
                "--window-size=1280,1800",
                &format!("--screenshot={}", png.display()),
            ],
            &page,
        );
        let bytes = std::fs::read(&png).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
            "{kind}: screenshot"
        );
    }
    // The player ran from file:// (the vendored bundle, no network) and built
    // its terminal from the embedded cast.
    let cell = chromium(
        &["--virtual-time-budget=5000", "--dump-dom"],
        &site.join("cells/cli-tmux..pi.html"),
    );
    assert!(
        cell.contains("ap-player") || cell.contains("ap-wrapper"),
        "the player did not start: {cell}"
    );
    // The hostile transcript is text in the DOM, not elements.
    assert!(
        cell.contains("&lt;/textarea&gt;&lt;/pre&gt;&lt;script&gt;"),
        "{cell}"
    );
}

/// Issue 28: press Play on a cell page and see the terminal's frames change (a test that
/// only finds the player's element passed while the page's policy blocked the player's
/// WebAssembly and nothing could play).
#[test]
fn issue28_play_advances_the_recording_on_a_cell_page() {
    use std::time::{Duration, Instant};
    use studyloop_acceptance::scratch::Scratch;
    use studyloop_acceptance::web_acp::browser::{self, Browser};

    if let Err(e) = browser::available() {
        panic!("the player test needs Chromium and chromedriver: {e}");
    }
    let f = super::report::fixture();
    let site = f.tmp.path().join("site");
    let o = super::report::report(
        &[f.run.dir().as_os_str(), "--out".as_ref(), site.as_os_str()],
        f.tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let scratch = Scratch::create().unwrap();
    let profile = browser::profile_dir(scratch.tmp_dir()).unwrap();
    let chrome = Browser::launch(&scratch, &profile).unwrap();
    let page = site.join("cells/cli-tmux..pi.html");
    chrome.goto(&format!("file://{}", page.display())).unwrap();
    chrome
        .wait_for(".ap-player .ap-play-button", Duration::from_secs(10))
        .unwrap();
    let screen = |c: &Browser| {
        c.eval(
            "var t = document.querySelector('.ap-player .ap-term'); return t ? t.innerText : null;",
            vec![],
        )
        .unwrap()
        .as_str()
        .map(str::to_owned)
    };
    let before = screen(&chrome);
    assert!(
        !before.as_deref().unwrap_or("").contains("READY"),
        "the recording's first frame is on screen before Play: {before:?}"
    );
    chrome.click(".ap-player .ap-play-button").unwrap();
    // The cast prints READY at 0.5 s and the hostile line at 1.25 s: both frames must
    // reach the terminal, in that order.
    let mut frames = vec![before.clone()];
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        let now = screen(&chrome);
        if frames.last() != Some(&now) {
            frames.push(now.clone());
        }
        if now
            .as_deref()
            .is_some_and(|t| t.contains("READY") && t.contains("</textarea>"))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let last = frames.last().cloned().flatten().unwrap_or_default();
    assert!(
        last.contains("READY") && last.contains("</textarea>"),
        "Play did not advance the terminal through the recording; frames seen: {frames:?}"
    );
    assert!(
        frames.len() >= 3,
        "fewer than two frame changes: {frames:?}"
    );
    // The hostile text arrived as terminal text, never as page elements.
    let injected = chrome
        .eval(
            "return document.querySelectorAll('.ap-player script, .ap-player img').length;",
            vec![],
        )
        .unwrap();
    assert_eq!(injected, serde_json::json!(0));
    chrome.close();
}

/// Issue 32: `just report`'s drift page lists a drift run's planted break with
/// its row to change, as Chromium parses it; with no drift run it says so.
#[test]
fn issue32_the_drift_page_shows_a_drift_runs_broken_step_and_its_row_to_change() {
    use super::report_grid::{Plan, catalogue, catalogue_run, plan};
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
    let site = tmp.path().join("site");
    let build = |site: &Path| {
        let o = super::report::report(
            &[new.dir().as_os_str(), "--out".as_ref(), site.as_os_str()],
            tmp.path(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // No drift run yet: said, not an empty page.
    build(&site);
    let dom = chromium(&["--dump-dom"], &site.join("drift.html"));
    assert!(dom.contains("No drift run"), "{dom}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        index.contains("No drift run: <a href=\"drift.html\">"),
        "{index}"
    );
    // The planted break: the candidate's TUI never shows its ready marker.
    let i = (0..names.len())
        .find(|i| plan(*i) == Plan::Pass && names[*i].starts_with("cli-tmux::codex"))
        .unwrap();
    let steps = |ok: bool| {
        serde_json::json!([{"kind": "step", "name": "harness ready", "ok": ok, "elapsed_ms": 900,
            "error": if ok { serde_json::Value::Null } else { "tmux session of pane %0 ended (exit) while waiting for the ready marker".into() }}])
        .to_string()
    };
    let bundle = |run: &Path| {
        let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains(&format!("\"trial\":\"{}\"", names[i])))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        std::path::PathBuf::from(v["bundle"].as_str().unwrap())
    };
    std::fs::write(bundle(old.dir()).join("steps.json"), steps(true)).unwrap();
    std::fs::write(bundle(new.dir()).join("steps.json"), steps(false)).unwrap();
    let drift = tmp.path().join("drift/codex-0.172.0-20261204T010000Z");
    let o = super::report::report(
        &[
            "--compare".as_ref(),
            old.dir().as_os_str(),
            new.dir().as_os_str(),
            "--out".as_ref(),
            drift.join("report").as_os_str(),
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // An interrupted drift run: no comparison, listed as such.
    std::fs::create_dir_all(tmp.path().join("drift/claude-2.1.400-20261204T020000Z")).unwrap();
    let site2 = tmp.path().join("site2");
    build(&site2);
    let dom = chromium(&["--dump-dom"], &site2.join("drift.html"));
    assert!(!dom.contains("No drift run"), "{dom}");
    assert!(
        dom.contains("codex-0.172.0-20261204T010000Z") && dom.contains("1 broken step(s)"),
        "{dom}"
    );
    assert!(
        dom.contains(&format!("<code>{}</code>", names[i]))
            && dom.contains("<code>acceptance/src/harness_spec/table.rs: SPECS[codex].markers.ready, ready_timeout</code>")
            && dom.contains("<code>product/studyloop/src/adapters/table.rs: ADAPTERS[codex].fresh</code>"),
        "{dom}"
    );
    assert!(
        dom.contains("claude-2.1.400-20261204T020000Z") && dom.contains("No comparison in"),
        "{dom}"
    );
    assert!(!dom.to_lowercase().contains("<script"), "{dom}");
}
