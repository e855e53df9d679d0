//! Issue 16 item 4: in real-auth mode a harness that is not logged in is a *listed* skip
//! of every one of its trials, decided when the catalogue is built — so nextest shows
//! SKIP (not the failure a run-time skip must be reported as there) and plain
//! `cargo test` shows it ignored with its reason. kiro's login check is its `whoami`;
//! its binary is not installable here, so a fake `kiro-cli` on PATH answers `whoami`
//! "Not logged in" the way the real one does. Before, every kiro trial was listed to
//! run: `probe::kiro` met the answer at run time (a failure under nextest) and the
//! lanes failed on it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::catalogue;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::runner::run_with_words;

/// A `kiro-cli` that prints a version and answers `whoami` as a signed-out CLI does,
/// counting its `whoami` calls in `calls`.
fn fake_kiro(bin: &Path, calls: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'kiro-cli 1.20.0' ;;\n  whoami) echo whoami >> '{}'; echo 'Error: Not logged in. Run kiro-cli login' >&2; exit 1 ;;\n  *) echo \"unexpected: $*\" >&2; exit 2 ;;\nesac\n",
        calls.display()
    );
    let path = bin.join("kiro-cli");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_signed_out_kiro_is_a_listed_skip_of_every_kiro_trial_under_both_runners() {
    let tmp = tempfile::tempdir().unwrap();
    let (bin, home, calls) = (
        tmp.path().join("bin"),
        tmp.path().join("home"),
        tmp.path().join("whoami-calls"),
    );
    fake_kiro(&bin, &calls);
    std::fs::create_dir_all(&home).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run = tmp.path().join("run");
    let base = [
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_REAL_AUTH", "1"),
        ("STUDYLOOP_ACC_HARNESS", "kiro"),
        ("STUDYLOOP_ACC_APPROVE", "harness:kiro"),
        ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
        ("HOME", home.to_str().unwrap()),
        ("PATH", path.as_str()),
    ];
    // nextest: two list phases (plain and --ignored) share the run's NEXTEST_RUN_ID.
    let nextest: Vec<(&str, &str)> = base
        .iter()
        .copied()
        .chain([("NEXTEST", "1"), ("NEXTEST_RUN_ID", "c0ffee-16")])
        .collect();
    let caller = CallerEnv::from_pairs(nextest);
    // A hostile run directory: a FIFO where the kept answer goes must neither hang the
    // listing nor be believed (it is replaced by the fresh answer).
    std::fs::create_dir_all(&run).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(run.join("login-kiro.json"))
        .status()
        .unwrap();
    assert!(made.success());
    for words in [
        &["acceptance", "--list", "--format", "terse"][..],
        &["acceptance", "--list", "--format", "terse", "--ignored"][..],
    ] {
        let code = run_with_words(Tier::Acceptance, &caller, words, catalogue::acceptance);
        assert_eq!(code, ExitCode::SUCCESS);
    }
    let calls_made = std::fs::read_to_string(&calls).unwrap_or_default();
    assert_eq!(
        calls_made.lines().count(),
        1,
        "one whoami per run, however many processes list it"
    );
    let skips = lines(&run.join("skip-ledger.jsonl"));
    let kiro_trials =
        catalogue::acceptance(&studyloop_acceptance::selection::Selection::defaults())
            .into_iter()
            .map(|s| s.name().to_owned())
            .filter(|n| n.split("::").nth(1) == Some("kiro"))
            .collect::<Vec<_>>();
    assert!(kiro_trials.len() >= 5, "{kiro_trials:?}");
    let want =
        "not logged in: kiro: Error: Not logged in. Run kiro-cli login; run `kiro-cli login`";
    for trial in &kiro_trials {
        let skip = skips
            .iter()
            .find(|s| s["trial"] == trial.as_str())
            .unwrap_or_else(|| panic!("{trial} is not a listed skip: {skips:?}"));
        let reason = skip["reason"].as_str().unwrap();
        assert!(reason.contains(want), "{trial}: {reason}");
    }

    // Plain libtest: a fresh run, the same skip, shown ignored with its reason; the
    // trial body never runs, so no results line and no bundle.
    let run2 = tmp.path().join("run2");
    let plain: Vec<(&str, &str)> = base
        .iter()
        .map(|&(k, v)| match k {
            "STUDYLOOP_ACC_RESULTS_DIR" => (k, run2.to_str().unwrap()),
            _ => (k, v),
        })
        .collect();
    let code = run_with_words(
        Tier::Acceptance,
        &CallerEnv::from_pairs(plain),
        &["acceptance", "probe::kiro", "--exact"],
        catalogue::acceptance,
    );
    assert_eq!(code, ExitCode::SUCCESS);
    let skips = lines(&run2.join("skip-ledger.jsonl"));
    assert!(
        skips
            .iter()
            .any(|s| s["trial"] == "probe::kiro" && s["reason"].as_str().unwrap().contains(want)),
        "{skips:?}"
    );
    assert!(
        lines(&run2.join("results.jsonl")).is_empty(),
        "a listed skip runs nothing"
    );
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap().lines().count(),
        2,
        "the fresh run asked whoami once more"
    );
}

/// A `kiro-cli` that logs every invocation, whatever its arguments, to `calls`.
fn counting_kiro(bin: &Path, calls: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\necho 'kiro-cli 1.20.0'\n",
        calls.display()
    );
    let path = bin.join("kiro-cli");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Issue 29: under real-auth an unapproved harness is a listed skip of every one of
/// its trials, naming the capability, its reasons and the entry that would approve
/// it, and the harness binary is never started (the counting stand-in logs 0 calls:
/// no probe, no lane). A malformed approval refuses the whole run before any trial,
/// also with 0 calls. Nothing else stands in for an approval: an approval of another
/// capability, a prefix, or one reason short all leave it unapproved.
#[test]
fn an_unapproved_real_auth_harness_is_a_listed_skip_that_never_starts_it() {
    for approve in [
        "",
        "harness:pi",
        "judge:release/openai-gpt4o",
        "harness:kiro[chargeable,credentialed]",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (bin, home, calls) = (
            tmp.path().join("bin"),
            tmp.path().join("home"),
            tmp.path().join("calls"),
        );
        counting_kiro(&bin, &calls);
        std::fs::create_dir_all(&home).unwrap();
        let path = format!("{}:/usr/bin:/bin", bin.display());
        let run = tmp.path().join("run");
        let caller = CallerEnv::from_pairs([
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_ACC_REAL_AUTH", "1"),
            ("STUDYLOOP_ACC_HARNESS", "kiro"),
            ("STUDYLOOP_ACC_APPROVE", approve),
            ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
            ("HOME", home.to_str().unwrap()),
            ("PATH", path.as_str()),
        ]);
        let code = run_with_words(
            Tier::Acceptance,
            &caller,
            &["acceptance", "--format", "terse"],
            catalogue::acceptance,
        );
        assert_eq!(code, ExitCode::SUCCESS, "{approve:?}");
        let skips = lines(&run.join("skip-ledger.jsonl"));
        let kiro: Vec<&Value> = skips
            .iter()
            .filter(|s| s["trial"].as_str().unwrap().split("::").nth(1) == Some("kiro"))
            .collect();
        assert!(kiro.len() >= 5, "{approve:?}: {skips:?}");
        for s in &kiro {
            let reason = s["reason"].as_str().unwrap();
            assert!(
                reason.contains("capability `harness:kiro` is not approved")
                    && reason.contains("writes-real-home")
                    && reason.contains("add the entry `harness:kiro`"),
                "{approve:?}: {reason}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(&calls).unwrap_or_default(),
            "",
            "{approve:?}: the unapproved harness was started"
        );
    }
    for bad in ["harness:*", "harness:kir", "harness:kiro ,harness:pi"] {
        let tmp = tempfile::tempdir().unwrap();
        let (bin, calls) = (tmp.path().join("bin"), tmp.path().join("calls"));
        counting_kiro(&bin, &calls);
        let path = format!("{}:/usr/bin:/bin", bin.display());
        let run = tmp.path().join("run");
        let caller = CallerEnv::from_pairs([
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_ACC_REAL_AUTH", "1"),
            ("STUDYLOOP_ACC_HARNESS", "kiro"),
            ("STUDYLOOP_ACC_APPROVE", bad),
            ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
            ("PATH", path.as_str()),
        ]);
        let code = run_with_words(
            Tier::Acceptance,
            &caller,
            &["acceptance"],
            catalogue::acceptance,
        );
        assert_eq!(code, ExitCode::from(2), "{bad:?}");
        assert!(
            !run.join("skip-ledger.jsonl").exists(),
            "{bad:?}: trials were decided"
        );
        assert_eq!(
            std::fs::read_to_string(&calls).unwrap_or_default(),
            "",
            "{bad:?}"
        );
    }
}
