//! Issue 33 §3: the crafted replies a bag-of-words score let through, each of which
//! must fail now, and the recorded samples, which must still pass. Run with
//! `--no-capture` to print the table kept in `docs/verifiers.md`.

use super::screen_tests_support::recorded_samples;
use super::tests::sent;
use crate::fidelity::SourceKind;
use crate::fidelity::{CellFidelity, TurnFidelity, score};

/// A reply of `n` distinct words.
fn words(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// (name, sent, recorded, source): every one is unfaithful.
pub(super) fn crafted() -> Vec<(&'static str, String, String, SourceKind)> {
    let base = sent(1);
    let forty = "The borrow checker proves at compile time that every reference is valid for as long as it is used and that no two mutable references to one value exist at once so data races cannot happen in safe code at all";
    let hundred = words(100);
    let long = words(5000);
    vec![
        (
            "ACP: `**` dropped",
            "Use **one** owner.".into(),
            "Use one owner.".into(),
            SourceKind::Acp,
        ),
        (
            "ACP: `*` dropped",
            "Use *one* owner.".into(),
            "Use one owner.".into(),
            SourceKind::Acp,
        ),
        (
            "store: step numbers swapped",
            "1. borrow\n2. move\n".into(),
            "2. borrow\n1. move\n".into(),
            SourceKind::SessionStore,
        ),
        (
            "store: fence line changed",
            "```rust\nfn main() {}\n```\n".into(),
            "```python\nfn main() {}\n```\n".into(),
            SourceKind::SessionStore,
        ),
        (
            "ACP: separator line added",
            base.clone(),
            format!("{base}\n────────────────────"),
            SourceKind::Acp,
        ),
        (
            "ACP: spinner line added",
            base.clone(),
            format!("⠋\n{base}"),
            SourceKind::Acp,
        ),
        (
            "ACP: status line behind a fence marker",
            base.clone(),
            format!("{base}\n``` esc to interrupt · 12s"),
            SourceKind::Acp,
        ),
        (
            "store: difference after word 4,096",
            long.clone(),
            long.replacen("w4999", "w4998", 1),
            SourceKind::SessionStore,
        ),
        (
            "ACP: reply lost entirely (0/0 words)",
            "```\n```".into(),
            String::new(),
            SourceKind::Acp,
        ),
        (
            "screen: reply lost entirely",
            base.clone(),
            String::new(),
            SourceKind::Screen,
        ),
        (
            "screen: one wrong word in 40",
            forty.into(),
            forty.replacen("mutable", "shared", 1),
            SourceKind::Screen,
        ),
        (
            "screen: one dropped letter in 40 words",
            forty.into(),
            forty.replacen("races", "race", 1),
            SourceKind::Screen,
        ),
        (
            "screen: 6-word status line in 100 words",
            hundred.clone(),
            format!("{hundred}\nesc to interrupt 12s 3.1k tokens"),
            SourceKind::Screen,
        ),
        (
            "screen: two words swapped",
            forty.into(),
            forty.replacen("compile time", "time compile", 1),
            SourceKind::Screen,
        ),
    ]
}

#[test]
fn every_crafted_reply_fails_and_every_recorded_sample_passes() {
    let mut let_through = Vec::new();
    println!("| case | source | ratio | pass |");
    println!("|---|---|---|---|");
    for (name, sent, recorded, source) in crafted() {
        let v = score(&sent, &recorded, source);
        println!(
            "| {name} | {} | {:?} | {} |",
            source.as_str(),
            v.ratio,
            v.pass
        );
        if v.pass {
            let_through.push(name);
        }
    }
    // A cell whose every turn recorded an empty reply proves nothing.
    let empty = TurnFidelity {
        turn: 1,
        source: SourceKind::Acp,
        text: String::new(),
        verdict: Some(score("", "", SourceKind::Acp)),
    };
    let cell = CellFidelity::of(&[empty.clone(), TurnFidelity { turn: 2, ..empty }]);
    println!(
        "| cell of two empty turns | acp | {:?} | {} |",
        cell.ratio, cell.pass
    );
    if cell.pass {
        let_through.push("cell of two empty turns");
    }
    let mut refused = Vec::new();
    for (name, sent, recorded, source) in recorded_samples() {
        let v = score(&sent, &recorded, source);
        println!(
            "| sample: {name} | {} | {:?} | {} |",
            source.as_str(),
            v.ratio,
            v.pass
        );
        if !v.pass {
            refused.push(format!("{name}: {v:?}"));
        }
    }
    assert!(
        let_through.is_empty(),
        "unfaithful replies passed: {let_through:#?}"
    );
    assert!(refused.is_empty(), "faithful samples failed: {refused:#?}");
}
