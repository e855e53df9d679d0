//! The scorer's parts the crafted pass/fail cases leave unchecked (issue 33 item 5:
//! mutants of the floors, the source names, the exact normalisation, fence lines, the
//! kept-chrome list and the cell's sources survived): each pinned here to what the
//! module doc and the evidence format say.

use super::source::SourceKind;
use super::{CellFidelity, TurnFidelity, normalise_exact, normalise_screen, score};

#[test]
fn each_source_has_its_documented_name_and_floor() {
    for (source, name, floor) in [
        (SourceKind::Acp, "acp", 1.0),
        (SourceKind::SessionStore, "session-store", 1.0),
        (SourceKind::Screen, "screen", 0.99),
    ] {
        assert_eq!(source.as_str(), name);
        // The evidence spells it the same way through serde.
        assert_eq!(serde_json::to_value(source).unwrap(), name);
        assert!((source.floor() - floor).abs() < f64::EPSILON, "{name}");
    }
}

#[test]
fn the_exact_normalisation_cuts_only_what_it_documents() {
    for (raw, want) in [
        ("a  \r\nb\t\r\n\n\n", "a\nb"),
        ("one\rtwo", "one\ntwo"),
        ("x", "x"),
        ("last line kept", "last line kept"),
        (
            "  lead kept\n\ninner blank kept\n",
            "  lead kept\n\ninner blank kept",
        ),
        ("", ""),
        ("\n\n", ""),
    ] {
        assert_eq!(normalise_exact(raw), want, "{raw:?}");
    }
}

#[test]
fn the_screen_drops_a_bare_fence_but_keeps_text_behind_a_marker() {
    assert_eq!(
        normalise_screen("```rust\nlet x = 1;\n```\n``` then this\n~~~ and this"),
        "let x = 1; then this and this"
    );
    assert_eq!(normalise_screen("```not a tag!"), "not a tag!");
    assert_eq!(normalise_screen("```c++\n```"), "");
}

#[test]
fn kept_chrome_lists_the_recorded_lines_found_nowhere_in_what_was_sent() {
    let sent = "The answer is forty two.\nSee the second line.";
    let v = score(
        sent,
        &format!("{sent}\nesc to interrupt"),
        SourceKind::Screen,
    );
    assert_eq!(v.kept_chrome, vec!["esc to interrupt"]);
    assert!(score(sent, sent, SourceKind::Screen).kept_chrome.is_empty());
    // A line that is part of what was sent is never chrome, nor is a rewrapped piece.
    let v = score(
        sent,
        "The answer is\nforty two.\nSee the second line.",
        SourceKind::Screen,
    );
    assert!(v.kept_chrome.is_empty(), "{:?}", v.kept_chrome);
    // At most five are listed.
    let noisy: String = (0..9).map(|i| format!("\nstatus {i} ▪ tokens")).collect();
    let v = score(sent, &format!("{sent}{noisy}"), SourceKind::Screen);
    assert_eq!(v.kept_chrome.len(), 5, "{:?}", v.kept_chrome);
    assert_eq!(v.kept_chrome[0], "status 0 ▪ tokens");
    // Exact sources: blank lines are no chrome; an added line is.
    let v = score("a\n\nb", "a\n\nb\n\nextra", SourceKind::Acp);
    assert_eq!(v.kept_chrome, vec!["extra"]);
}

#[test]
fn a_cell_names_each_source_once_in_order_and_takes_the_highest_floor() {
    let turn = |n: u64, source| TurnFidelity {
        turn: n,
        source,
        text: "x".into(),
        verdict: Some(score("x", "x", source)),
    };
    let cell = CellFidelity::of(&[
        turn(1, SourceKind::Screen),
        turn(2, SourceKind::Acp),
        turn(3, SourceKind::Screen),
    ]);
    assert_eq!(cell.sources, vec![SourceKind::Screen, SourceKind::Acp]);
    assert!((cell.floor - 1.0).abs() < f64::EPSILON);
    assert!(cell.pass);
    let screen_only = CellFidelity::of(&[turn(1, SourceKind::Screen)]);
    assert!((screen_only.floor - 0.99).abs() < f64::EPSILON);
}

#[test]
fn kept_chrome_of_an_exact_source_reads_its_markup_as_sent() {
    // A line sent with emphasis is the same line recorded, not chrome, though the
    // flattened screen form of what was sent has lost its stars.
    let text = "**bold** text and `code`\nmore";
    assert!(score(text, text, SourceKind::Acp).kept_chrome.is_empty());
    // A reply flattened by a screen reader is not chrome of a screen reply either.
    assert!(
        score(text, "bold text and code more", SourceKind::Screen)
            .kept_chrome
            .is_empty()
    );
}
