//! Issue 11 §4: `studyloop-uat signoff` printed planted secrets verbatim in its FAIL
//! reasons. Secrets (generated here at run time, never committed) are planted in a
//! recorded message, a trial (cell) name, a bundle path, a manifest field a parser error
//! quotes, and manifest fields that reach the release summary; the real binary's stdout,
//! stderr and every file it writes to the release directory must hold none of them.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::world::{SMOKE, STUDY, World};
use common::{TRANSCRIPT, bundle, uat};
use serde_json::json;
use studyloop_acceptance::ledger::TrialOutcome;
use studyloop_redaction::{RedactionRules, Redactor};

/// Secret-shaped strings, built at run time. The first ones match the shipped rules;
/// the rest are kinds the next rules version adds: each is asserted only once the
/// shipped rules catch it, so this test grows with the rules.
fn secrets() -> Vec<String> {
    let alnum = |n: usize| "a1B2c3D4e5".repeat(n / 10 + 1)[..n].to_owned();
    vec![
        format!("ghp_{}", alnum(36)),
        format!("AKIA{}", "QWERTYUIOPASDFGH"),
        format!("eyJ{}.eyJ{}.{}", alnum(20), alnum(24), alnum(30)),
        format!("sk-proj-{}", alnum(40)),
        format!("npm_{}", alnum(36)),
        format!("AccountKey={}==", alnum(86)),
        format!("\"private_key_id\": \"{}\"", "0123456789abcdef".repeat(3)),
        format!("eyJ{}.{}.{}", alnum(20), alnum(24), alnum(30)),
    ]
}

/// The planted secrets the shipped rules rewrite (what this build must never print).
fn caught() -> Vec<String> {
    let redactor = Redactor::new(&RedactionRules::load_default().unwrap());
    let caught: Vec<String> = secrets()
        .into_iter()
        .filter(|s| redactor.redact(s) != *s)
        .collect();
    assert!(caught.len() >= 4, "the shipped rules catch {caught:?}");
    caught
}

/// Everything the command printed and wrote under `out`.
fn everything(output: &Output, out: &Path) -> String {
    let mut all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if let Ok(entries) = std::fs::read_dir(out) {
        for e in entries.flatten() {
            all.push_str(&e.file_name().to_string_lossy());
            all.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    all
}

fn assert_clean(all: &str, planted: &[String]) {
    for s in planted {
        assert!(
            !all.contains(s.as_str()),
            "`{s}` printed or written:\n{all}"
        );
    }
}

fn signoff(w: &World, inputs: &[&Path]) -> Output {
    let out = w.path("releases");
    let mut args: Vec<&std::ffi::OsStr> = vec!["signoff".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend(["--out".as_ref(), out.as_os_str()]);
    uat(&args, w.tmp.path())
}

#[test]
fn a_failed_signoff_prints_no_planted_secret() {
    let planted = caught();
    let all_secrets = secrets().join(" ");
    let w = World::new();
    // A recorded failure message, quoted in a FAIL reason.
    w.run
        .record_result(
            SMOKE,
            TrialOutcome::Failed,
            Some(&format!("harness said {all_secrets}")),
            Some(&w.smoke),
            None,
        )
        .unwrap();
    // A bundle path that does not exist, quoted in the reason that it cannot be read.
    let ghost = w.path(&format!("durable/{}", secrets()[0]));
    w.run
        .record_result(STUDY, TrialOutcome::Passed, None, Some(&ghost), None)
        .unwrap();
    // A bundle passed directly whose manifest names a cell (a trial name) with secrets.
    let named = bundle(&w.path("durable"), SMOKE, TRANSCRIPT);
    w.edit_manifest(&named, |m| {
        m["cell"] = json!(format!("journey::{}", secrets()[0]));
        m["notes"] = json!([all_secrets.clone()]);
    });
    let output = signoff(&w, &[w.run.dir(), &named]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let all = everything(&output, &w.path("releases"));
    assert!(all.contains("[SECRET:github-token]"), "{all}");
    assert_clean(&all, &planted);
}

#[test]
fn an_error_quoting_a_planted_value_prints_no_secret() {
    let planted = caught();
    let w = World::new();
    // serde's error for an unknown variant quotes the value.
    w.edit_manifest(&w.smoke, |m| m["outcome"] = json!(secrets()[0].clone()));
    let output = signoff(&w, &[w.run.dir(), &w.smoke]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let all = everything(&output, &w.path("releases"));
    assert!(all.contains("unknown variant"), "{all}");
    assert_clean(&all, &planted);
}

#[test]
fn a_passing_signoff_writes_no_planted_secret_to_the_release_directory() {
    let planted = caught();
    let all_secrets = secrets().join(" ");
    let w = World::new();
    // Manifest fields that reach the release summary (the smoke bundle is ungraded, so
    // its manifest may change without a new grading).
    w.edit_manifest(&w.smoke, |m| {
        m["harness_version"] = json!(format!("stub-acp 1.0 {all_secrets}"));
        m["actor_model"] = json!(secrets()[0].clone());
    });
    // As if the run had written these values: its line records this manifest's digest.
    let bytes = std::fs::read(w.smoke.join("manifest.json")).unwrap();
    let digest = studyloop_acceptance::evidence::manifest_sha256(&bytes);
    w.edit_results(SMOKE, |v| v["manifest_sha256"] = json!(digest));
    let output = signoff(&w, &[w.run.dir()]);
    let all = everything(&output, &w.path("releases"));
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(all.contains("uat-signoff-"), "{all}");
    assert!(all.contains("[SECRET:github-token]"), "{all}");
    assert_clean(&all, &planted);
}
