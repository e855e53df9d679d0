//! Issue 28 item 6: a real session's recording is recorded whole and plays.
//! A codex pane writes ≈ 2.95 MB/min (mostly its screen redrawn), so the old
//! 8 MiB cap cut a session after ≈ 3 minutes and the report played none over
//! 4 MiB. Here a synthetic 30-minute redraw-heavy session at that rate goes
//! through the real recorder into a real bundle, then the real report, then
//! real Chromium: Play must advance it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{ResultMeta, RunLog, TrialOutcome};
use studyloop_acceptance::pane::cast::{CAST_GZ_BUDGET, Cast};

/// The measured codex rate (issue 28), bytes per minute.
const CODEX_BYTES_PER_MIN: f64 = 2.95e6;
const MINUTES: u64 = 30;
const FPS: u64 = 10;
const WORDS: [&str; 16] = [
    "the",
    "learner",
    "asked",
    "about",
    "recursion",
    "so",
    "I",
    "showed",
    "a",
    "base",
    "case",
    "and",
    "then",
    "we",
    "traced",
    "calls",
];

/// A 120×40 TUI redrawing its whole screen `FPS` times a second for
/// `MINUTES`: the conversation's last 36 lines (a new streamed line every
/// 2 s, words from a seeded generator), a spinner with the elapsed time, an
/// input box; each frame padded with spaces to the codex rate, as a TUI pads
/// its rows.
/// Returns the recording and the bytes the pane wrote.
fn redraw_session(t0: Instant) -> (Cast, usize) {
    let frame_bytes = (CODEX_BYTES_PER_MIN / 60.0 / FPS as f64).round() as usize;
    let mut cast = Cast::new();
    let mut seed: u64 = 0x5eed_2028;
    let mut convo: Vec<String> = Vec::new();
    let mut written = 0;
    let spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴'];
    for n in 0..MINUTES * 60 * FPS {
        if n % (2 * FPS) == 0 {
            let mut line = String::from("\u{1b}[38;5;245m• \u{1b}[0m");
            for _ in 0..14 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                line.push_str(WORDS[(seed >> 60) as usize]);
                line.push(' ');
            }
            convo.push(line);
        }
        let secs = n / FPS;
        let mut frame = String::from("\u{1b}[?2026h\u{1b}[H");
        for (row, line) in convo.iter().rev().take(36).rev().enumerate() {
            let _ = write!(frame, "\u{1b}[{};1H\u{1b}[2K{line}", row + 1);
        }
        let _ = write!(
            frame,
            "\u{1b}[38;1H\u{1b}[2K\u{1b}[1m{} Working ({}m {:02}s • esc to interrupt)\u{1b}[0m",
            spinner[(n % 6) as usize],
            secs / 60,
            secs % 60
        );
        frame.push_str("\u{1b}[39;1H\u{1b}[2K› ");
        let pad = frame_bytes.saturating_sub(frame.len() + "\u{1b}[?2026l".len());
        frame.push_str(&" ".repeat(pad));
        frame.push_str("\u{1b}[?2026l");
        cast.push(t0 + Duration::from_millis(n * 1000 / FPS), frame.as_bytes());
        written += frame.len();
    }
    (cast, written)
}

#[test]
fn issue28_a_30_minute_session_is_recorded_whole_within_budget_and_plays() {
    use std::io::BufRead as _;
    use studyloop_acceptance::scratch::Scratch;
    use studyloop_acceptance::web_acp::browser::{self, Browser};

    if let Err(e) = browser::available() {
        panic!("the player test needs Chromium and chromedriver: {e}");
    }
    let (cast, written) = redraw_session(Instant::now());
    let rate = written as f64 / MINUTES as f64;
    assert!(
        (rate - CODEX_BYTES_PER_MIN).abs() < CODEX_BYTES_PER_MIN * 0.02,
        "the synthetic session is not at the codex rate: {rate:.0} B/min"
    );
    assert_eq!(
        cast.len(),
        written,
        "the recorder kept {} of the {written} bytes the pane wrote",
        cast.len()
    );
    let gz = cast.to_asciicast_gz((120, 40));
    let mut plain = std::io::BufReader::new(flate2::read::GzDecoder::new(gz.as_slice()));
    let mut header = String::new();
    plain.read_line(&mut header).unwrap();
    assert!(
        !header.contains("\"title\""),
        "a 30-minute session was cut: {header}"
    );
    let last = plain.lines().last().unwrap().unwrap();
    let last: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert!(
        last[0].as_f64().unwrap() > (MINUTES * 60 - 1) as f64,
        "the recording ends early: {last}"
    );
    assert!(
        gz.len() as u64 <= CAST_GZ_BUDGET,
        "{} bytes of cast gzipped to {} > the budget {CAST_GZ_BUDGET}",
        cast.len(),
        gz.len()
    );
    eprintln!(
        "30 min at {rate:.0} B/min: {} bytes raw, {} bytes gzipped",
        cast.len(),
        gz.len()
    );
    drop(cast);

    let tmp = tempfile::tempdir().unwrap();
    let run = RunLog::open(tmp.path().join("runs/run-1")).unwrap();
    let run_id = RunId::generate();
    let mut m = Manifest::new(
        &run_id,
        Tier::Acceptance,
        "cli-tmux::codex",
        Surface::CliTmux,
    );
    m.harness = Some("codex".into());
    m.outcome = Outcome::Completed;
    let mut w = BundleWriter::create(run.dir().join("evidence").join(run_id.as_str()), m).unwrap();
    w.write_file("screens/first-session.cast.gz", &gz).unwrap();
    let bundle = w.finish().unwrap();
    let meta = ResultMeta {
        attempt: Some(1),
        elapsed_ms: Some(MINUTES * 60_000),
        category: None,
    };
    run.record_result_meta(
        "cli-tmux::codex",
        TrialOutcome::Passed,
        None,
        Some(&bundle),
        None,
        meta,
    )
    .unwrap();
    let site = super::report::site(run.dir(), tmp.path());
    let page = site.join("cells/cli-tmux..codex.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("1799.9 s"),
        "the page does not say the length"
    );

    let scratch = Scratch::create().unwrap();
    let profile = browser::profile_dir(scratch.tmp_dir()).unwrap();
    let chrome = Browser::launch(&scratch, &profile).unwrap();
    chrome.goto(&format!("file://{}", page.display())).unwrap();
    chrome
        .wait_for(".ap-player .ap-play-button", Duration::from_secs(90))
        .unwrap();
    let screen = |c: &Browser| {
        c.eval(
            "var t = document.querySelector('.ap-player .ap-term'); return t ? t.innerText : '';",
            vec![],
        )
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_owned()
    };
    chrome.click(".ap-player .ap-play-button").unwrap();
    // The status line's clock ticks every second of the recording: three
    // distinct working screens mean the player is advancing through it.
    let mut seen: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && seen.len() < 3 {
        let now = screen(&chrome);
        if now.contains("Working (") && !seen.contains(&now) {
            seen.push(now);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    chrome.close();
    assert!(
        seen.len() >= 3,
        "Play did not advance the 30-minute recording; screens seen: {seen:?}"
    );
}
