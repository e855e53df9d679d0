//! Ungated tests of the acceptance runner's gate, run as a subprocess with a
//! controlled environment (the seed's rule: the gate is tested without opting
//! in, by a run that explicitly asks for the acceptance trials).
//!
//! Locating the runner: `bins::test_runner` (the newest built `deps/acceptance-<hash>`
//! when it is not older than the runner's sources, else cargo builds it and names it).
//! `cargo test -p studyloop-acceptance` and `cargo nextest run` build all test
//! targets together, so the fast path is the normal one. Every child gets
//! `env_clear()` plus exactly the variables a case sets, and its results go to a
//! temporary run directory that is removed afterwards.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use studyloop_acceptance::ledger::{RunRecords, TrialOutcome};
use studyloop_acceptance::runner::GATE_OFF_REASON;

const HARNESSES: [&str; 6] = ["codex", "claude", "kiro", "pi", "opencode", "grok"];

fn runner_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        studyloop_acceptance::bins::test_runner(
            "acceptance",
            &[
                "acceptance/src",
                "acceptance/tests/acceptance.rs",
                "acceptance/turn-scripts",
                "actors/src",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The runner's output plus the run directory it wrote, removed on drop.
struct Run {
    output: Output,
    results: tempfile::TempDir,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    fn records(&self) -> RunRecords {
        RunRecords::read(self.results.path()).unwrap()
    }
}

/// Runs the acceptance runner with exactly `vars` (plus PATH, HOME and the
/// results dir) and `args`.
fn run(vars: &[(&str, &str)], args: &[&str]) -> Run {
    let results = tempfile::Builder::new()
        .prefix("gate-run-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    run_in(results, vars, args)
}

/// [`run`] into an existing results dir (a second process of the same run).
fn run_in(results: tempfile::TempDir, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let home = results.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let output = Command::new(runner_exe())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .env("STUDYLOOP_ACC_RESULTS_DIR", results.path())
        .envs(vars.iter().copied())
        .args(args)
        .output()
        .unwrap();
    Run { output, results }
}

/// `(trial, outcome text)` for every `test <trial> ... <outcome>` line.
fn trial_lines(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| l.split_once(" ... "))
        .map(|(name, rest)| (name.trim().to_owned(), rest.to_owned()))
        .collect()
}

/// Asserts every gated (non-`meta::`) trial is reported ignored with the gate
/// reason, that one availability probe per harness is among them, and that
/// the ledger holds the same; returns how many there were. Counted, not
/// hard-coded, so lanes can be added without touching this test.
fn assert_all_gated_ignored(run: &Run) -> usize {
    let stdout = run.stdout();
    let lines = trial_lines(&stdout);
    let gated: Vec<&(String, String)> = lines
        .iter()
        .filter(|(n, _)| !n.starts_with("meta::"))
        .collect();
    for (name, outcome) in &gated {
        assert_eq!(outcome, &format!("ignored ({GATE_OFF_REASON})"), "{name}");
    }
    for h in HARNESSES {
        assert!(
            gated.iter().any(|(n, _)| n == &format!("probe::{h}")),
            "no probe::{h} in {stdout}"
        );
    }
    let records = run.records();
    for (name, _) in &gated {
        let status = records.get(name).unwrap();
        assert_eq!(status.outcome, TrialOutcome::Skipped, "{name}");
        assert_eq!(status.message.as_deref(), Some(GATE_OFF_REASON), "{name}");
    }
    gated.len()
}

#[test]
fn without_opting_in_every_trial_is_ignored_naming_studyloop_acc() {
    let run = run(&[], &[]);
    let stdout = run.stdout();
    assert!(run.output.status.success(), "{stdout}\n{}", run.stderr());
    assert!(
        GATE_OFF_REASON.contains("STUDYLOOP_ACC")
            && GATE_OFF_REASON.contains("docs/run-the-matrix.md#acceptance-tier")
    );
    let gated = assert_all_gated_ignored(&run);
    // The only trial that runs is the catalogue check, which needs nothing.
    let meta: Vec<_> = trial_lines(&stdout)
        .into_iter()
        .filter(|(n, _)| n.starts_with("meta::"))
        .collect();
    assert_eq!(
        meta,
        [("meta::catalog_is_valid".to_owned(), "ok".to_owned())],
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("1 passed; 0 failed; {gated} ignored")),
        "{stdout}"
    );
    assert!(
        run.stderr().contains(&format!("{gated} trial(s) skipped")),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_gate_value_other_than_exactly_one_stays_closed() {
    for value in ["0", " 1", "true", "yes"] {
        let run = run(
            &[
                ("STUDYLOOP_ACC", value),
                ("STUDYLOOP_ACC_HARNESS", "oclode"),
            ],
            &[],
        );
        assert!(run.output.status.success(), "{value:?}: {}", run.stderr());
        assert_all_gated_ignored(&run);
    }
}

#[test]
fn an_unknown_harness_fails_before_any_trial_naming_it_and_the_six() {
    let run = run(
        &[("STUDYLOOP_ACC", "1"), ("STUDYLOOP_ACC_HARNESS", "oclode")],
        &[],
    );
    assert_eq!(run.output.status.code(), Some(2), "{}", run.stderr());
    let stderr = run.stderr();
    assert!(
        stderr.contains("`oclode`") && stderr.contains("STUDYLOOP_ACC_HARNESS"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("known: {}", HARNESSES.join(", "))),
        "{stderr}"
    );
    assert!(stderr.contains("no trial was run"), "{stderr}");
    assert!(
        !run.stdout().contains("test "),
        "a trial ran: {}",
        run.stdout()
    );
    assert!(run.records().trials().is_empty());
}

#[test]
fn an_unknown_actor_fails_before_any_trial_naming_it_and_the_four() {
    let run = run(
        &[("STUDYLOOP_ACC", "1"), ("STUDYLOOP_ACC_ACTOR", "robot")],
        &[],
    );
    assert_eq!(run.output.status.code(), Some(2), "{}", run.stderr());
    let stderr = run.stderr();
    assert!(
        stderr.contains("`robot`") && stderr.contains("STUDYLOOP_ACC_ACTOR"),
        "{stderr}"
    );
    assert!(
        stderr.contains("known: scripted, gateway, direct, harness"),
        "{stderr}"
    );
    assert!(
        !run.stdout().contains("test "),
        "a trial ran: {}",
        run.stdout()
    );
}

#[test]
fn gate_on_names_unselected_harnesses_and_missing_binaries() {
    let run = run(
        &[
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_ACC_HARNESS", " kiro ,codex,kiro"),
        ],
        &[],
    );
    let stdout = run.stdout();
    assert!(run.output.status.success(), "{stdout}");
    let line = |trial: &str| -> String {
        let prefix = format!("test {trial} ");
        stdout
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_default()
            .to_owned()
    };
    let pi = line("probe::pi");
    assert!(
        pi.ends_with(
            "... ignored (pi not selected via STUDYLOOP_ACC_HARNESS (selected: kiro, codex))"
        ),
        "{pi}"
    );
    let kiro = line("probe::kiro");
    assert!(
        kiro.contains("... ignored (kiro-cli not found on PATH ("),
        "{kiro}"
    );
    let codex = line("probe::codex");
    assert!(
        codex.contains("... ignored (codex not found on PATH (run `just harnesses`"),
        "{codex}"
    );
}

#[test]
fn issue28_under_nextest_each_skip_is_ledgered_once_over_both_list_phases() {
    // nextest lists every binary twice, without and with `--ignored`, in one run:
    // a skip is one ledger line, not one per list phase.
    let nextest = [("NEXTEST", "1"), ("NEXTEST_RUN_ID", "0000-gate-twice")];
    let first = run(&nextest, &["--list", "--format", "terse"]);
    assert!(first.output.status.success(), "{}", first.stderr());
    let second = run_in(
        first.results,
        &nextest,
        &["--list", "--format", "terse", "--ignored"],
    );
    assert!(second.output.status.success(), "{}", second.stderr());
    let ledger = std::fs::read_to_string(
        second
            .results
            .path()
            .join(studyloop_acceptance::ledger::SKIP_LEDGER),
    )
    .unwrap();
    let kiro = ledger
        .lines()
        .filter(|l| l.contains("\"trial\":\"probe::kiro\""))
        .count();
    assert_eq!(kiro, 1, "probe::kiro ledgered {kiro} times:\n{ledger}");
    let listed = second
        .stdout()
        .lines()
        .filter(|l| l.ends_with(": test"))
        .count();
    assert_eq!(ledger.lines().count(), listed, "{ledger}");
}

#[test]
fn under_nextest_skips_are_static_ignores_listed_and_ledgered() {
    let nextest = [("NEXTEST", "1"), ("NEXTEST_RUN_ID", "0000-gate-test")];
    let listed = run(&nextest, &["--list", "--format", "terse", "--ignored"]);
    let stdout = listed.stdout();
    assert!(listed.output.status.success(), "{}", listed.stderr());
    let names: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .collect();
    assert_eq!(names.len(), stdout.lines().count(), "{stdout}");
    assert!(names.iter().all(|n| !n.starts_with("meta::")), "{stdout}");
    for h in HARNESSES {
        assert!(names.contains(&format!("probe::{h}").as_str()), "{stdout}");
    }
    assert_eq!(listed.records().trials().len(), names.len());
    // A forced run of a skipped trial fails naming the reason, never passes.
    let forced = run(&nextest, &["probe::kiro", "--exact", "--include-ignored"]);
    assert!(!forced.output.status.success(), "{}", forced.stdout());
    assert!(
        forced
            .stdout()
            .contains("forced to run although it cannot: STUDYLOOP_ACC is not 1"),
        "{}",
        forced.stdout()
    );
}

/// A stand-in pi: `--version` reports where it ran; `--no-session -p PROMPT` posts the
/// prompt to the provider in its provisioned `~/.pi/agent/models.json` and prints the
/// reply body (or, with a `logged-out` file beside it, says it has no login).
pub(crate) const FAKE_PI: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then
  echo "fake-pi 9.9.9 home=$HOME key=${OPENAI_API_KEY:-none} hatch=${STUDYLOOP_TEST_AGENT_CMD:-none}"
  exit 0
fi
if [ -e "$(dirname "$0")/logged-out" ]; then
  echo "Error: 401 Unauthorized: no API key configured" >&2
  exit 1
fi
models="$HOME/.pi/agent/models.json"
url=$(sed -n 's/.*"baseUrl": *"\([^"]*\)".*/\1/p' "$models")
key=$(sed -n 's/.*"apiKey": *"\([^"]*\)".*/\1/p' "$models")
body=$(printf '{"model":"stub-model","messages":[{"role":"user","content":"%s"}]}' "$3")
curl -sS --noproxy '*' -H 'content-type: application/json' -H "authorization: Bearer $key" \
  "$url/chat/completions" -d "$body"
echo
"#;

#[test]
fn a_present_binary_is_probed_inside_scratch_and_leaves_verified_evidence() {
    // A stand-in `pi` (named as such: a shell script) that proves where it ran:
    // its `--version` prints its HOME and whether a credential leaked into its env;
    // its one-shot `-p` mode (the authenticated probe) asks the model the probe
    // provisioned into its HOME, as pi would, and prints the answer.
    let bin = tempfile::Builder::new()
        .prefix("fake-bin-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let script = bin.path().join("pi");
    std::fs::write(&script, FAKE_PI).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let run = run(
        &[
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_ACC_HARNESS", "pi"),
            ("PATH", &path),
            ("OPENAI_API_KEY", "sk-canary"),
            ("STUDYLOOP_TEST_AGENT_CMD", "stale-hatch"),
        ],
        &["probe::pi", "--exact"],
    );
    assert!(
        run.output.status.success(),
        "{}\n{}",
        run.stdout(),
        run.stderr()
    );
    let status = run.records().get("probe::pi").cloned().unwrap();
    assert_eq!(status.outcome, TrialOutcome::Passed);
    let bundle = PathBuf::from(status.bundle.unwrap());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap())
            .unwrap();
    let version = manifest["harness_version"].as_str().unwrap();
    assert!(
        version.starts_with("fake-pi 9.9.9 home=/tmp/sl-acc-"),
        "{version}"
    );
    assert!(version.ends_with("key=none hatch=none"), "{version}");
    assert_eq!(manifest["binary_path"], script.display().to_string());
    assert_eq!(manifest["outcome"], "completed");
    assert_eq!(manifest["auth_mode"], "stub-provider");
    assert_eq!(manifest["tier"], "acceptance");
    // The probe sent its prompt through the provisioned stub provider (issue 16).
    let notes = manifest["notes"].to_string();
    assert!(
        notes.contains(studyloop_acceptance::probe_trials::AUTH_PROBE_NOTE),
        "{notes}"
    );
    assert!(notes.contains("MENTOR-REPLY"), "{notes}");
    let verify = Command::new(env!("CARGO_BIN_EXE_studyloop-evidence"))
        .arg("verify")
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    // The scratch world it ran in is gone.
    let scratch = version
        .split("home=")
        .nth(1)
        .unwrap()
        .split('/')
        .take(3)
        .collect::<Vec<_>>()
        .join("/");
    assert!(!Path::new(&scratch).exists(), "{scratch} was left behind");
}

/// An authenticated probe whose harness says it is not signed in is a named skip
/// ("not logged in: …, run …"), never a failed lane (issue 16). Before, the probe was
/// presence-only and a failed one-shot prompt would have been an error.
#[test]
fn a_probe_whose_harness_is_not_logged_in_is_a_named_skip() {
    let bin = tempfile::Builder::new()
        .prefix("fake-bin-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let script = bin.path().join("pi");
    std::fs::write(&script, FAKE_PI).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(bin.path().join("logged-out"), "").unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let run = run(
        &[
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_ACC_HARNESS", "pi"),
            ("PATH", &path),
        ],
        &["probe::pi", "--exact"],
    );
    let status = run.records().get("probe::pi").cloned().unwrap();
    assert_eq!(
        status.outcome,
        TrialOutcome::Skipped,
        "{}\n{}",
        run.stdout(),
        run.stderr()
    );
    let message = status.message.unwrap_or_default();
    assert!(message.contains("not logged in: pi"), "{message}");
    assert!(message.contains("401 Unauthorized"), "{message}");
    assert!(message.contains("run `pi` and `/login`"), "{message}");
}
