use super::*;

fn run(trial: &str, date: &str, ms: u64) -> Recorded {
    Recorded {
        trial: trial.to_owned(),
        date: date.to_owned(),
        ms,
        committed: true,
    }
}

#[test]
fn runs_of_a_committed_tree_outweigh_dirty_ones_when_a_trial_has_both() {
    let dirty = |date: &str, ms| Recorded {
        committed: false,
        ..run("mcp::opencode", date, ms)
    };
    let d = Durations::from_runs([
        dirty("2026-12-01T01", 77_000),
        dirty("2026-12-01T02", 76_000),
        dirty("2026-12-03T01", 75_000),
        run("mcp::opencode", "2026-12-02T14", 22_000),
    ]);
    assert_eq!(d.estimate("mcp::opencode"), 22_000);
    // With no committed run, the dirty ones are what there is.
    let only_dirty = Durations::from_runs([dirty("2026-12-01T01", 77_000)]);
    assert_eq!(only_dirty.estimate("mcp::opencode"), 77_000);
}

#[test]
fn the_estimate_is_the_median_of_the_last_clean_runs() {
    // Seven runs of one trial: the two oldest (very slow) are past LAST_CLEAN.
    let runs = [
        ("2026-11-01", 90_000),
        ("2026-11-02", 80_000),
        ("2026-11-03", 5_000),
        ("2026-11-04", 7_000),
        ("2026-11-05", 6_000),
        ("2026-11-06", 9_000),
        ("2026-11-07", 8_000),
    ];
    let d = Durations::from_runs(runs.iter().map(|(date, ms)| run("cli-tmux::pi", date, *ms)));
    assert_eq!(d.estimate("cli-tmux::pi"), 7_000, "median of 5,7,6,9,8");
    // The read order does not matter.
    let rev = Durations::from_runs(
        runs.iter()
            .rev()
            .map(|(date, ms)| run("cli-tmux::pi", date, *ms)),
    );
    assert_eq!(d, rev);
}

#[test]
fn an_unknown_trial_gets_its_surface_then_the_overall_median() {
    let d = Durations::from_runs([
        run("cli-tmux::codex", "2026-12-01", 10_000),
        run("cli-tmux::opencode", "2026-12-01", 40_000),
        run("cli-tmux::pi", "2026-12-01", 20_000),
        run("mcp::codex", "2026-12-01", 3_000),
        run("mcp::grok", "2026-12-01", 9_000),
    ]);
    assert_eq!(d.estimate("cli-tmux::codex::logged-out"), 20_000);
    assert_eq!(d.estimate("mcp::kiro"), 3_000, "lower middle of 3 and 9 s");
    assert_eq!(
        d.estimate("probe::pi"),
        10_000,
        "no probe receipt: every trial's median"
    );
    assert_eq!(Durations::default().estimate("anything"), UNKNOWN_MS);
}

#[test]
fn only_clean_regular_json_receipts_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("2026-12-02").join("codex");
    std::fs::create_dir_all(&dir).unwrap();
    let receipt = |cell: &str, outcome: &str, ok: bool, ms: u64| {
        serde_json::json!({
            "cell": cell, "date": "2026-12-02T10:00:00Z", "outcome": outcome, "dirty": false,
            "steps": [{"name": "a", "ok": true, "elapsed_ms": ms}, {"name": "b", "ok": ok, "elapsed_ms": 1}],
        })
        .to_string()
    };
    std::fs::write(
        dir.join("a.json"),
        receipt("mcp::codex", "completed", true, 4_000),
    )
    .unwrap();
    std::fs::write(
        dir.join("b.json"),
        receipt("web-acp::codex", "errored", true, 99_000),
    )
    .unwrap();
    std::fs::write(
        dir.join("c.json"),
        receipt("web-acp::pi", "completed", false, 99_000),
    )
    .unwrap();
    std::fs::write(dir.join("d.json"), "{not json").unwrap();
    std::fs::write(
        dir.join("e.txt"),
        receipt("drill::codex", "completed", true, 99_000),
    )
    .unwrap();
    let outside = tmp.path().join("outside.json");
    std::fs::write(&outside, receipt("drill::pi", "completed", true, 99_000)).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("f.json")).unwrap();
    let d = Durations::from_dir(tmp.path());
    assert_eq!(d.estimate("mcp::codex"), 4_001);
    // Nothing else was read: every other trial falls back to that one time.
    for other in ["web-acp::codex", "web-acp::pi", "drill::codex", "drill::pi"] {
        assert_eq!(d.estimate(other), 4_001, "{other}");
    }
    assert!(Durations::from_dir(&tmp.path().join("missing")).is_empty());
}

#[test]
fn the_committed_receipts_give_every_cell_a_positive_estimate() {
    let d = Durations::recorded();
    assert!(!d.is_empty(), "receipts/ holds clean runs");
    assert!(
        d.estimate("cli-tmux::opencode") > d.estimate("cli-tmux::codex::paste"),
        "opencode's lane is the long pole in every recorded run"
    );
}
