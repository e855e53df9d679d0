//! The `studyloop-uat` binary: what `signoff` and `grade` print and how they exit (0 PASS
//! or graded, 1 FAIL or rejected, 2 no verdict), with a controlled environment.

use crate::common;

use std::process::Output;

use common::{TRANSCRIPT, bundle, good_reply, judges, uat};
use studyloop_acceptance::ledger::TrialOutcome;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn signoff_prints_the_verdict_every_reason_and_exits_1_on_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = common::run_log(&tmp.path().join("runs/1"), &["journey::smoke"]);
    let smoke = bundle(&tmp.path().join("durable"), "journey::smoke", TRANSCRIPT);
    shard
        .record_result(
            "journey::smoke",
            TrialOutcome::Passed,
            None,
            Some(&smoke),
            None,
        )
        .unwrap();
    let out_dir = tmp.path().join("releases");
    let out = uat(
        &[
            "signoff".as_ref(),
            shard.dir().as_os_str(),
            "--out".as_ref(),
            out_dir.as_os_str(),
        ],
        tmp.path(),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    for needle in [
        "studyloop-uat signoff: FAIL",
        "definition: signoff v3",
        "inputs: 1 run director(ies), 0 bundle(s)",
        "journey::smoke",
        "journey::study_arc",
        "notes:",
        "  - `journey::smoke`: not graded: a mechanics check that grades nothing",
        "reasons (7):",
        "  - required cell `journey::architect_launch` has no recorded result",
        "  - required cell `journey::mcp_lifecycle` has no recorded result",
        "  - required cell `journey::now_with_active_plan` has no recorded result",
        "  - required cell `journey::study_arc` has no recorded result",
        "  - required cell `journey::faults` has no recorded result",
        "  - required cell `journey::drill` has no recorded result",
        "  - graded cell `journey::study_arc` has no evidence bundle",
        "summary: not written (a failed sign-off is not a release record)",
    ] {
        assert!(
            stdout.contains(needle),
            "`{needle}` missing from:\n{stdout}"
        );
    }
    assert!(!out_dir.exists());
}

#[test]
fn unusable_input_is_a_one_line_error_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-run");
    let out = uat(&["signoff".as_ref(), missing.as_os_str()], tmp.path());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no-such-run") && stderr.contains("is not a directory"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (_, stderr) = text(&uat(&["signoff".as_ref(), empty.as_os_str()], tmp.path()));
    assert!(
        stderr.contains("neither an evidence bundle") && stderr.contains("results.jsonl"),
        "{stderr}"
    );
}

#[test]
fn grade_writes_the_arbitration_beside_the_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = bundle(
        &tmp.path().join("durable"),
        "journey::study_session",
        TRANSCRIPT,
    );
    let stub = judges(
        tmp.path(),
        &[
            ("stub-judge-a", good_reply(4)),
            ("stub-judge-b", "not json".into()),
            ("stub-judge-c", good_reply(5)),
        ],
    );
    let url = stub.base_url();
    let args = [
        "grade".as_ref(),
        dir.as_os_str(),
        "--council".as_ref(),
        "hermetic".as_ref(),
        "--stub-url".as_ref(),
        url.as_ref(),
    ];
    let out = uat(&args, tmp.path());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("GRADED `journey::study_session`")
            && stdout.contains("2 of 3 seat(s) scored"),
        "{stdout}"
    );
    assert!(
        stdout.contains("seat stub-b: unscored: the reply is not the required JSON object"),
        "{stdout}"
    );
    assert!(
        stdout.contains("accuracy: median 4.5, spread 1"),
        "{stdout}"
    );
    let md = dir
        .with_file_name(format!(
            "{}.arbitration",
            dir.file_name().unwrap().to_string_lossy()
        ))
        .join("ARBITRATION.md");
    assert!(md.is_file(), "{stdout}");

    // Without the stub URL every stub seat is absent: too few seats, so rejected (exit 1).
    let out = uat(
        &[
            "grade".as_ref(),
            dir.as_os_str(),
            "--council".as_ref(),
            "hermetic".as_ref(),
        ],
        tmp.path(),
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("REJECTED") && stdout.contains("absent: no stub provider URL"),
        "{stdout}"
    );
}
