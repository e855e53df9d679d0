//! Transcript extraction time per turn, per source (`just bench`): each pinned
//! harness's session-store reader (`transcript::read_reply`, one read, on the recorded
//! sample placed in a scratch HOME), grok's screen extractor, and ACP chunk
//! assembly. Baseline in the same run: the old way, the pane driver's screen
//! extraction (`pane::screen::extract_reply`) on the same harness's recorded
//! screen. Prints the median per turn, the ratio to the baseline, and each
//! source's fidelity against the text the stub sent (the old way's too, which
//! shows the chrome it carried). Asserts nothing: a 3-turn lane spends seconds
//! per turn in the harness, so anything under a few milliseconds is free.

use std::path::{Path, PathBuf};
use std::time::Instant;

use studyloop_acceptance::fidelity::{self, SourceKind};
use studyloop_acceptance::harness_spec;
use studyloop_acceptance::pane::screen::extract_reply;
use studyloop_acceptance::selection::HarnessName;
use studyloop_acceptance::transcript::{TurnTrace, read_reply};

const RUNS: usize = 200;
const SEED: u64 = 4242;
const PROMPT: &str = "and now iterators please";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcript")
        .join(name)
}

fn median_us(mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn place(home: &Path, sample: &str, at: &str) {
    let dest = home.join(at);
    std::fs::create_dir_all(dest.parent().expect("parent")).expect("dir");
    std::fs::copy(data(sample), dest).expect("copy sample");
}

fn main() {
    let sent = studyloop_stubs::realistic_reply(SEED, 2, Some(PROMPT), None);
    let rows: [(HarnessName, &str, &str, &str); 5] = [
        (
            HarnessName::Codex,
            "codex-0.171.0-rollout.jsonl",
            ".codex/sessions/2026/11/30/rollout-x.jsonl",
            "codex-0.171.0-screen.txt",
        ),
        (
            HarnessName::Claude,
            "claude-2.1.332-session.jsonl",
            ".claude/projects/-w/s.jsonl",
            "claude-2.1.332-screen.txt",
        ),
        (
            HarnessName::Pi,
            "pi-0.73.1-session.jsonl",
            ".pi/agent/sessions/--w--/s.jsonl",
            "pi-0.73.1-screen.txt",
        ),
        (HarnessName::Opencode, "", "", "opencode-1.18.33-screen.txt"),
        (HarnessName::Grok, "", "", "grok-0.0.34-screen.txt"),
    ];
    println!(
        "transcript extraction per turn (median of {RUNS}); baseline = old pane extraction on the same screen"
    );
    for (name, sample, at, screen_file) in rows {
        let home = tempfile::tempdir().expect("home");
        if name == HarnessName::Opencode {
            let dir = home.path().join(".local/share/opencode");
            std::fs::create_dir_all(&dir).expect("dir");
            let sql = std::fs::read_to_string(data("opencode-1.18.33-db.sql")).expect("sql");
            let db = rusqlite::Connection::open(dir.join("opencode.db")).expect("db");
            db.execute_batch(&format!("PRAGMA foreign_keys = OFF;\n{sql}"))
                .expect("load");
        } else if !sample.is_empty() {
            place(home.path(), sample, at);
        }
        let screen = std::fs::read_to_string(data(screen_file)).expect("screen");
        let (turn, prompt) = (2, PROMPT);
        let trace = TurnTrace {
            home: home.path(),
            turn,
            screen: &screen,
            prompt,
        };
        let new = read_reply(name, &trace).expect("reply");
        let spec = harness_spec::spec(name);
        let idle = spec.markers().and_then(|m| m.idle);
        let marker = format!(
            "MENTOR-REPLY {turn} {}: {}",
            studyloop_stubs::nonce(SEED, turn),
            prompt
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        );
        let old =
            extract_reply(&screen, 0, prompt, idle.as_ref(), Some(&marker)).unwrap_or_default();
        let t_new = median_us(|| {
            std::hint::black_box(read_reply(name, &trace).ok());
        });
        let t_old = median_us(|| {
            std::hint::black_box(extract_reply(
                &screen,
                0,
                prompt,
                idle.as_ref(),
                Some(&marker),
            ));
        });
        let f_new = fidelity::score(&sent, &new.text, new.source);
        let f_old = fidelity::score(&sent, &old, SourceKind::Screen);
        println!(
            "{name:>9} {:>13}: {t_new:8.1} µs/turn, baseline {t_old:7.1} µs, ratio {:6.2}; fidelity {:.3} (old screen way {:.3}{})",
            format!("{:?}", new.source),
            t_new / t_old,
            f_new.ratio.unwrap_or(f64::NAN),
            f_old.ratio.unwrap_or(f64::NAN),
            f_old
                .diff
                .map(|d| format!(", first diff {d}"))
                .unwrap_or_default()
        );
    }
    let chars: Vec<char> = sent.chars().collect();
    let chunks: Vec<String> = chars.chunks(7).map(|c| c.iter().collect()).collect();
    let t_acp = median_us(|| {
        std::hint::black_box(studyloop_acceptance::transcript::RecordedReply::acp(
            chunks.concat(),
        ));
    });
    println!("      acp           Acp: {t_acp:8.1} µs/turn (chunk assembly)");
}
