//! Issue 28 item 7: every `junit.xml` the acceptance and UAT runners write
//! validates against Jenkins' `junit-10.xsd` (the schema CI tools read JUnit
//! by; `tests/data/junit/README.md` says where the copy comes from), checked by
//! the pinned `xmlschema` that `just deps-xmlschema` installs. Without it each
//! test is a named skip: it prints why and how to install it, never a silent pass.

use std::path::{Path, PathBuf};
use std::process::Command;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::runner::{JUNIT_FILE, TrialReport, TrialSpec, run_with_words};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit/junit-10.xsd")
}

/// The pinned validator, or `None` after printing the named skip.
fn validator(test: &str) -> Option<PathBuf> {
    let bin = root().join(".deps/xmlschema-venv/bin/xmlschema-validate");
    if bin.is_file() {
        return Some(bin);
    }
    eprintln!(
        "SKIP {test}: the pinned xmlschema is not installed ({} is missing): run `just deps-xmlschema` (part of `just deps`, which `just test` runs)",
        bin.display()
    );
    None
}

/// `Ok` when `xml` validates against `junit-10.xsd`, else the validator's words.
fn validate(bin: &Path, xml: &Path) -> Result<(), String> {
    let out = Command::new(bin)
        .arg("--schema")
        .arg(schema())
        .arg("-v")
        .arg(xml)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({e})", bin.display()));
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A run of `tier` with a passed, a twice-failed-then-passed, a failed and a
/// skipped trial (hostile text in the messages); returns its `junit.xml`.
fn junit_of_a_run(tier: Tier, dir: &Path) -> PathBuf {
    let run = dir.join("run");
    let gate = match tier {
        Tier::Acceptance => "STUDYLOOP_ACC",
        Tier::Uat => "STUDYLOOP_UAT",
    };
    let caller = CallerEnv::from_pairs([
        (gate, "1"),
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_REPEAT", "2"),
        ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
        ("PATH", "/usr/bin:/bin"),
    ]);
    let hostile = "step `harness ready`: </failure><script>x</script> & \u{1b}[31m \"q\"";
    let label = match tier {
        Tier::Acceptance => "acceptance",
        Tier::Uat => "uat",
    };
    let _ = run_with_words(tier, &caller, &[label, "--test-threads=1"], |_| {
        vec![
            TrialSpec::ungated("meta::steady", |_| TrialReport::passed()),
            TrialSpec::ungated("meta::broken", move |_| TrialReport::failed(hostile)),
            TrialSpec::ungated("meta::skipper", |_| {
                TrialReport::skipped("no <tool> & here")
            }),
        ]
    });
    let xml = run.join(JUNIT_FILE);
    assert!(xml.is_file(), "the run wrote no {}", xml.display());
    xml
}

#[test]
fn issue28_acceptance_junit_validates_against_jenkins_junit_10_xsd() {
    let Some(bin) = validator("acceptance junit") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let xml = junit_of_a_run(Tier::Acceptance, tmp.path());
    let text = std::fs::read_to_string(&xml).unwrap();
    validate(&bin, &xml).unwrap_or_else(|e| panic!("{e}\n{text}"));
    // The skip count a schema-valid report still carries, on the suite.
    assert!(text.contains("<testsuite "), "{text}");
    assert!(text.contains("skipped=\"1\""), "{text}");
}

#[test]
fn issue28_uat_junit_validates_against_jenkins_junit_10_xsd() {
    let Some(bin) = validator("uat junit") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let xml = junit_of_a_run(Tier::Uat, tmp.path());
    let text = std::fs::read_to_string(&xml).unwrap();
    validate(&bin, &xml).unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn the_schema_check_refuses_what_jenkins_refuses() {
    // The check can fail: the attribute today's runners wrote on <testsuites>
    // (`skipped`, not in junit-10.xsd) is refused, and so is a case without a name.
    let Some(bin) = validator("schema check") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for (i, bad) in [
        "<testsuites tests=\"1\" skipped=\"0\"><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\"><testcase name=\"t\"/></testsuite></testsuites>",
        "<testsuites><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\"><testcase/></testsuite></testsuites>",
    ]
    .iter()
    .enumerate()
    {
        let path = tmp.path().join(format!("bad{i}.xml"));
        std::fs::write(&path, bad).unwrap();
        assert!(validate(&bin, &path).is_err(), "accepted: {bad}");
    }
}
