//! Reply-detection latency of the control-mode `PaneDriver` (`just bench`):
//! from the moment a scripted shell "harness" has finished printing a
//! stub-style reply (and its idle prompt) to the moment the driver decides the
//! mentor replied. Baseline in the same run: the anchor's way, polling
//! `capture-pane` every 150 ms until the reply line is on screen.
//! Prints p50/p95 and the ratio; asserts nothing (target p50 < 50 ms, p95 < 150 ms).
//!
//! The harness stamps CLOCK_REALTIME right after its last byte; the driver's
//! decision is stamped with the same clock, so the two are comparable.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use regex::Regex;
use studyloop_acceptance::pane::{Limits, Markers, PaneDriver, Proof};
use studyloop_acceptance::tmux::Tmux;

const TURNS: u32 = 40;

const FAKE: &str = r#"
n=0
printf 'READY> '
while IFS= read -r line; do
  n=$((n+1))
  sleep 0.05
  printf 'MENTOR-REPLY %d nonce%d: %s\nREADY> ' "$n" "$n" "$line"
  date +%s%N > "$STAMPS/$n"
done
"#;

fn main() {
    let dir = tempfile::Builder::new()
        .prefix("sl-bench-rd-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let stamps = dir.path().join("stamps");
    std::fs::create_dir(&stamps).expect("stamps dir");
    let script = dir.path().join("fake.sh");
    std::fs::write(&script, FAKE).expect("script");
    let env = [
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("HOME", dir.path().display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        ("STAMPS", stamps.display().to_string()),
    ];
    let tmux = Tmux::new(dir.path().join("s"), env).expect("socket");
    let script_s = script.display().to_string();
    let pane = tmux
        .new_session(
            "bench",
            dir.path(),
            (160, 40),
            &["bash", "--noprofile", "--norc", &script_s],
        )
        .expect("tmux");

    let detect = measure_driver(&tmux, &pane, &stamps);
    let baseline = measure_polling(&tmux, &pane, &stamps, TURNS + 1);
    tmux.kill_server();

    let (p50, p95) = (percentile(&detect, 50), percentile(&detect, 95));
    let (b50, b95) = (percentile(&baseline, 50), percentile(&baseline, 95));
    println!(
        "reply detection (control mode, event-driven): p50 {p50:.1} ms, p95 {p95:.1} ms over {} turns (target p50 < 50, p95 < 150)",
        detect.len()
    );
    println!(
        "baseline (capture-pane polled every 150 ms): p50 {b50:.1} ms, p95 {b95:.1} ms over {} turns",
        baseline.len()
    );
    println!("ratio p50 driver/baseline: {:.2}", p50 / b50);
}

fn measure_driver(tmux: &Tmux, pane: &str, stamps: &Path) -> Vec<f64> {
    let markers = Markers {
        ready: Regex::new(r"READY> ?$").expect("re"),
        idle: Some(Regex::new(r"(?m)^READY> ?$").expect("re")),
        busy: None,
    };
    let limits = Limits {
        max_turns: TURNS,
        ..Limits::default()
    };
    let proof = Proof::StubMarker {
        marker: Box::new(|n, prompt| {
            let w: Vec<&str> = prompt.split_whitespace().take(2).collect();
            format!("MENTOR-REPLY {n} nonce{n}: {}", w.join(" "))
        }),
        next_turn: 1,
    };
    let mut driver =
        PaneDriver::attach(tmux, "bench", pane, markers, limits, proof).expect("attach");
    driver.wait_ready().expect("ready");
    let mut out = Vec::new();
    for n in 1..=TURNS {
        let r = driver
            .send_turn(&format!("bench turn {n} alpha beta"))
            .expect("reply");
        let decided = now_ns();
        assert_eq!(r.stub_turn, Some(n));
        if let Some(printed) = stamp(stamps, n) {
            out.push((decided.saturating_sub(printed)) as f64 / 1e6);
        }
    }
    out
}

fn measure_polling(tmux: &Tmux, pane: &str, stamps: &Path, first: u32) -> Vec<f64> {
    let mut out = Vec::new();
    for n in first..first + 20 {
        tmux.run(&["send-keys", "-t", pane, "-l", &format!("poll turn {n}")])
            .expect("keys");
        tmux.run(&["send-keys", "-t", pane, "Enter"])
            .expect("enter");
        let want = format!("MENTOR-REPLY {n} nonce{n}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let screen = tmux
                .run(&["capture-pane", "-p", "-J", "-t", pane, "-S", "-"])
                .unwrap_or_default();
            if screen.contains(&want) {
                let decided = now_ns();
                if let Some(printed) = stamp(stamps, n) {
                    out.push((decided.saturating_sub(printed)) as f64 / 1e6);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
    }
    out
}

fn stamp(stamps: &Path, n: u32) -> Option<u128> {
    // The harness writes the stamp right after printing; give it a moment.
    for _ in 0..100 {
        if let Some(v) = std::fs::read_to_string(stamps.join(n.to_string()))
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

fn percentile(values: &[f64], p: usize) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) * p) / 100]
}
