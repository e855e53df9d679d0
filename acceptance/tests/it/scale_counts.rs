//! `docs/scale.md` states the matrix's size; the figure comes from the catalogue, not
//! from memory (issue 30 item 10: the page said 31 trials while the catalogue listed 52).

use studyloop_acceptance::catalogue;
use studyloop_acceptance::selection::Selection;

use crate::markdown::workspace_root;

/// The sentence `docs/scale.md` must hold: the hermetic runner's trial count (its
/// `meta::catalog_is_valid` check included) and how
/// many of them are kiro's (always a named skip here: kiro-cli is on no reachable
/// registry), both counted from the catalogue.
fn expected_sentence() -> String {
    let names: Vec<String> = catalogue::acceptance(&Selection::defaults())
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    let kiro = names
        .iter()
        .filter(|n| n.split("::").nth(1) == Some("kiro"))
        .count();
    format!(
        "the hermetic acceptance runner lists {} trials, {kiro} of them kiro's",
        names.len()
    )
}

#[test]
fn issue30_scale_md_counts_the_trials_the_catalogue_lists() {
    let text = std::fs::read_to_string(workspace_root().join("docs/scale.md"))
        .expect("docs/scale.md exists");
    let want = expected_sentence();
    // The page wraps lines; compare with whitespace runs made single spaces.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&want),
        "docs/scale.md must say \"{want}\" (counted from acceptance/src/catalogue.rs); update the page"
    );
}
