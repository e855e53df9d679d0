//! Ungated tests of the UAT runner's gate, run as a subprocess with a controlled
//! environment (the gate is tested without opting in, by a run that explicitly asks
//! for the UAT trials): without both `STUDYLOOP_ACC=1` and `STUDYLOOP_UAT=1` every
//! journey is ignored with a reason naming the missing variable(s) and the README
//! section, recorded in the skip ledger; nothing runs and no evidence is written.
//!
//! The runner is found with `bins::test_runner` (built fresh by `cargo test` /
//! nextest, else cargo builds it). Every child gets `env_clear()` plus exactly the
//! variables a case sets; its run directory and HOME are a temporary directory removed
//! afterwards.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use studyloop_acceptance::ledger::{RunRecords, TrialOutcome};
use studyloop_acceptance::runner::{UAT_ACC_OFF_REASON, UAT_GATE_OFF_REASON, UAT_GATES_OFF_REASON};

/// Every trial of the runner's catalogue (the journeys plus a named failure for each
/// cell of the shipped definition no journey runs), sorted as libtest lists them.
fn cells() -> Vec<String> {
    let mut names: Vec<String> = studyloop_uat::journey::catalogue_for(
        &studyloop_acceptance::selection::Selection::defaults(),
        &studyloop_acceptance::caller_env::CallerEnv::default(),
    )
    .iter()
    .map(|t| t.name().to_owned())
    .collect();
    names.sort();
    names
}

fn runner_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        studyloop_acceptance::bins::test_runner(
            "uat",
            &[
                "uat/src",
                "uat/tests/uat.rs",
                "uat/Cargo.toml",
                "acceptance/src",
                "actors/src",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    })
}

struct Run {
    output: Output,
    tmp: tempfile::TempDir,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    fn records(&self) -> RunRecords {
        RunRecords::read(&self.tmp.path().join("runs")).unwrap()
    }
    fn evidence_root(&self) -> PathBuf {
        self.tmp.path().join("evidence")
    }
}

/// Runs the UAT runner with exactly `vars` (plus PATH, HOME, the run directory and
/// the evidence root, all inside one temporary directory) and `args`.
fn run(vars: &[(&str, &str)], args: &[&str]) -> Run {
    let tmp = tempfile::Builder::new()
        .prefix("uat-gate-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let output = Command::new(runner_exe())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .env("STUDYLOOP_ACC_RESULTS_DIR", tmp.path().join("runs"))
        .env("STUDYLOOP_UAT_EVIDENCE_ROOT", tmp.path().join("evidence"))
        .envs(vars.iter().copied())
        .args(args)
        .output()
        .unwrap();
    Run { output, tmp }
}

fn assert_all_ignored(run: &Run, reason: &str) {
    let stdout = run.stdout();
    assert!(run.output.status.success(), "{stdout}\n{}", run.stderr());
    for cell in &cells() {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("test {cell} ")))
            .unwrap_or_else(|| panic!("no line for {cell}: {stdout}"));
        assert!(line.ends_with(&format!("ignored ({reason})")), "{line}");
        let status = run.records().get(cell.as_str()).cloned().unwrap();
        assert_eq!(status.outcome, TrialOutcome::Skipped);
        assert_eq!(status.message.as_deref(), Some(reason));
    }
    let ignored = format!("0 passed; 0 failed; {} ignored", cells().len());
    assert!(stdout.contains(&ignored), "{stdout}");
    assert!(
        !run.evidence_root().exists(),
        "a gated-off run wrote evidence"
    );
}

#[test]
fn without_either_gate_every_journey_is_ignored_naming_both_variables() {
    let run = run(&[], &[]);
    assert_all_ignored(&run, UAT_GATES_OFF_REASON);
    for needle in [
        "STUDYLOOP_ACC",
        "STUDYLOOP_UAT",
        "docs/sign-off-a-release.md#uat-tier",
        "just testuat",
    ] {
        assert!(UAT_GATES_OFF_REASON.contains(needle), "{needle}");
    }
    assert!(
        run.stderr()
            .contains(&format!("{} trial(s) skipped", cells().len())),
        "{}",
        run.stderr()
    );
}

#[test]
fn acceptance_alone_does_not_open_the_uat_tier() {
    let run = run(&[("STUDYLOOP_ACC", "1")], &[]);
    assert_all_ignored(&run, UAT_GATE_OFF_REASON);
    assert!(UAT_GATE_OFF_REASON.starts_with("STUDYLOOP_UAT is not 1"));
}

#[test]
fn uat_alone_names_the_missing_acceptance_gate() {
    let run = run(&[("STUDYLOOP_UAT", "1")], &[]);
    assert_all_ignored(&run, UAT_ACC_OFF_REASON);
    assert!(UAT_ACC_OFF_REASON.starts_with("STUDYLOOP_ACC is not 1"));
}

#[test]
fn a_uat_value_other_than_exactly_one_stays_closed() {
    for value in ["0", " 1", "true", "yes"] {
        let run = run(&[("STUDYLOOP_ACC", "1"), ("STUDYLOOP_UAT", value)], &[]);
        assert!(run.output.status.success(), "{value:?}: {}", run.stderr());
        assert!(
            run.stdout().contains(&format!("{} ignored", cells().len())),
            "{value:?}: {}",
            run.stdout()
        );
    }
}

#[test]
fn with_both_gates_an_unknown_harness_fails_before_any_trial() {
    let run = run(
        &[
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_UAT", "1"),
            ("STUDYLOOP_ACC_HARNESS", "oclode"),
        ],
        &[],
    );
    assert_eq!(run.output.status.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("`oclode`"), "{}", run.stderr());
    assert!(
        !run.stdout().contains("test "),
        "a trial ran: {}",
        run.stdout()
    );
}

#[test]
fn with_both_gates_a_missing_harness_is_a_named_skip_of_the_graded_journey() {
    let run = run(
        &[
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_UAT", "1"),
            ("STUDYLOOP_ACC_HARNESS", "kiro,pi"),
            // Nothing is installed there, whatever this machine has in /usr/bin.
            ("PATH", "/nonexistent-studyloop-uat-gate-test"),
        ],
        &["journey::study_session", "--exact"],
    );
    let stdout = run.stdout();
    assert!(run.output.status.success(), "{stdout}\n{}", run.stderr());
    let status = run
        .records()
        .get("journey::study_session")
        .cloned()
        .unwrap();
    assert_eq!(status.outcome, TrialOutcome::Skipped);
    let reason = status.message.unwrap();
    for needle in [
        "no harness for the graded journey (selected: kiro, pi)",
        "codex not selected via STUDYLOOP_ACC_HARNESS",
        "pi not found on PATH (run `just harnesses`",
    ] {
        assert!(reason.contains(needle), "{needle}: {reason}");
    }
    assert!(stdout.contains(&format!("ignored ({reason})")), "{stdout}");
    assert!(!run.evidence_root().exists());
}

#[test]
fn under_nextest_the_journeys_are_static_skips_and_a_forced_run_fails() {
    let nextest = [("NEXTEST", "1"), ("NEXTEST_RUN_ID", "0000-uat-gate-test")];
    let listed = run(&nextest, &["--list", "--format", "terse", "--ignored"]);
    assert!(listed.output.status.success(), "{}", listed.stderr());
    let names: Vec<String> = listed.stdout().lines().map(str::to_owned).collect();
    let want: Vec<String> = cells().iter().map(|c| format!("{c}: test")).collect();
    assert_eq!(names, want);
    assert!(want.contains(&"journey::smoke: test".to_owned()) && want.len() >= 8);
    assert_eq!(listed.records().trials().len(), want.len());
    let forced = run(
        &nextest,
        &["journey::smoke", "--exact", "--include-ignored"],
    );
    assert!(!forced.output.status.success(), "{}", forced.stdout());
    assert!(
        forced.stdout().contains(
            "forced to run although it cannot: STUDYLOOP_ACC and STUDYLOOP_UAT are not 1"
        ),
        "{}",
        forced.stdout()
    );
}

/// Issue 11 §2: a second run pointed at a run directory used to append to it silently,
/// and the sign-off then read both runs as one. The second run is refused before any
/// trial, naming both runs and the fix; a second process of the same nextest run
/// (`NEXTEST_RUN_ID`, shared by its list and run phases) is not.
#[test]
fn a_second_run_into_the_same_run_directory_is_refused() {
    let first = run(&[], &[]);
    assert!(first.output.status.success(), "{}", first.stderr());
    let again = |vars: &[(&str, &str)]| {
        Command::new(runner_exe())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", first.tmp.path().join("home"))
            .env("STUDYLOOP_ACC_RESULTS_DIR", first.tmp.path().join("runs"))
            .envs(vars.iter().copied())
            .output()
            .unwrap()
    };
    let second = again(&[]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("belongs to run") && stderr.contains("a run directory holds one run"),
        "{stderr}"
    );
    let before = first.records().trials().len();
    assert_eq!(before, cells().len(), "the refused run wrote nothing");

    let tmp = tempfile::tempdir().unwrap();
    let shared = |phase: &[&str]| {
        Command::new(runner_exe())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", tmp.path())
            .env("NEXTEST", "1")
            .env("NEXTEST_RUN_ID", "6e1c0c1a-0000-4000-8000-000000000001")
            .env("STUDYLOOP_ACC_RESULTS_DIR", tmp.path().join("runs"))
            .args(phase)
            .output()
            .unwrap()
    };
    let list = shared(&["--list"]);
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let run = shared(&["journey::smoke", "--exact"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
