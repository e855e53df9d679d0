//! The screen extractor and the fidelity score on recorded grok screens
//! (a 3-turn TUI session and a live lane's `-J` captures) and on synthetic
//! renderings of the stub's text.

use super::tests::{PROMPTS, SEED, sample, sent};
use super::{TurnTrace, mentor_reply, screen};
use crate::fidelity::{SourceKind, cell_ratio, score};
use crate::selection::HarnessName;

#[test]
fn grok_screen_extractor_drops_chrome_rejoins_wraps_and_meets_its_floor() {
    // Three turns on one screen: each reply is found under its own echo.
    let screen_text = std::fs::read_to_string(sample("grok-0.0.34-screen.txt")).unwrap();
    let home = tempfile::tempdir().unwrap();
    for turn in 1..=3_u64 {
        let t = TurnTrace {
            home: home.path(),
            turn,
            screen: &screen_text,
            prompt: PROMPTS[usize::try_from(turn - 1).unwrap()],
        };
        let got = mentor_reply(HarnessName::Grok, &t).unwrap();
        assert_eq!(got.source, SourceKind::Screen);
        for chrome in ['╭', '│', '╰', '⏸', '⏺', '█', '≋'] {
            assert!(
                !got.text.contains(chrome),
                "turn {turn}: {chrome:?} in {}",
                got.text
            );
        }
        // No other turn's echo or reply leaks in.
        assert!(!got.text.lines().any(|l| l.trim_start().starts_with("> ")));
        assert_eq!(got.text.matches("MENTOR-REPLY").count(), 1, "{}", got.text);
        let marker = format!("MENTOR-REPLY {turn} {}", studyloop_stubs::nonce(SEED, turn));
        assert!(got.text.starts_with(&marker), "{}", got.text);
        // The >260-column line comes back as one line.
        let long = sent(turn)
            .lines()
            .find(|l| l.starts_with("To put it all"))
            .unwrap()
            .replace('`', "");
        assert!(
            got.text.lines().any(|l| l.replace('`', "") == long),
            "turn {turn}: {}",
            got.text
        );
        let verdict = score(&sent(turn), &got.text, got.source);
        assert!(
            verdict.pass && verdict.ratio.is_some_and(|r| r >= 0.99),
            "turn {turn}: {verdict:?}"
        );
    }
    // Without the echo there is no reply to extract.
    assert!(screen::extract(&screen::GROK, &screen_text, "never typed").is_none());
}

#[test]
fn grok_screen_extractor_meets_its_floor_on_a_live_lanes_captures() {
    // `cli-tmux::grok` screens as the pane driver captured them (`capture-pane
    // -J`, 145 columns), with the text the stub's log says it sent.
    let turns: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(sample("grok-0.0.34-lane-sent.json")).unwrap(),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut verdicts = Vec::new();
    for t in &turns {
        let turn = t["turn"].as_u64().unwrap();
        let screen_text =
            std::fs::read_to_string(sample(&format!("grok-0.0.34-lane-turn-{turn}.txt"))).unwrap();
        let trace = TurnTrace {
            home: home.path(),
            turn,
            screen: &screen_text,
            prompt: t["prompt"].as_str().unwrap(),
        };
        let got = mentor_reply(HarnessName::Grok, &trace).unwrap();
        let verdict = score(t["sent"].as_str().unwrap(), &got.text, got.source);
        assert!(verdict.pass, "turn {turn}: {verdict:?}\n{}", got.text);
        verdicts.push(verdict);
    }
    assert_eq!(verdicts.len(), 3);
    assert!(cell_ratio(&verdicts).unwrap() >= 0.99);
}

#[test]
fn a_reply_quoting_the_learner_is_not_taken_for_the_echo() {
    let screen_text = "  > explain recursion to me please\n\n  ⏺ MENTOR-REPLY 1 abcd: explain recursion\n\n    You asked:\n\n    > explain recursion to me please\n\n    Here is the answer.\n\n  ╭────────╮\n  │ ❯      │\n  ╰────────╯\n";
    let got = screen::extract(&screen::GROK, screen_text, PROMPTS[0]).unwrap();
    assert_eq!(
        got,
        "MENTOR-REPLY 1 abcd: explain recursion\n\nYou asked:\n\n> explain recursion to me please\n\nHere is the answer."
    );
}

#[test]
fn fidelity_forgives_rendering_only() {
    let sent = sent(1);
    let rendered: String = sent
        .lines()
        .filter(|l| !l.starts_with("```"))
        .map(|l| {
            let l = l.trim_start_matches("## ").replace(['`', '*'], "");
            let l = l
                .strip_prefix("- ")
                .map_or(l.clone(), |r| format!("  • {r}"));
            format!("  {l}\n")
        })
        .collect();
    let v = score(&sent, &rendered, SourceKind::Screen);
    assert_eq!(v.ratio, Some(1.0), "{v:?}");
    assert_eq!(v.diff, None);
    // A dropped character, a status word or a border is not rendering.
    let dropped = sent.replacen("récursion", "récursio", 1);
    let v = score(&sent, &dropped, SourceKind::SessionStore);
    assert!(!v.pass && v.ratio.is_some_and(|r| r < 1.0), "{v:?}");
    assert!(
        v.diff.as_deref().is_some_and(|d| d.contains("récursio")),
        "{v:?}"
    );
    let chrome = format!("{sent}\n╰──────╯ Context");
    assert!(!score(&sent, &chrome, SourceKind::Acp).pass);
    let lost = score(&sent, "", SourceKind::Screen);
    assert!(
        lost.ratio.is_none() && !lost.pass,
        "an empty reply is unknown and a fail: {lost:?}"
    );
}

#[test]
fn cell_ratio_weighs_characters_and_is_unknown_without_turns() {
    assert_eq!(cell_ratio(&[]), None);
    let a = score(
        "one two three four",
        "one two three four",
        SourceKind::Screen,
    );
    let b = score("five six", "five", SourceKind::Screen);
    let r = cell_ratio(&[a, b]).unwrap();
    // (18 + 4 common of 18 + 18 and 8 + 4 characters)
    assert!((r - 44.0 / 48.0).abs() < 1e-9, "{r}");
}
