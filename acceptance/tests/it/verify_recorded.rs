//! Issue 33 §2: `studyloop-evidence verify --run` compares each manifest with the sha256
//! its results line recorded. The inventory does not cover the manifest, so a bundle
//! whose manifest's `outcome`, `auth_mode` or `cell` was edited afterwards still verifies
//! on its own (shown below); only the recorded digest catches it, and a line that
//! records none is a failure, never a pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{RunLog, TrialOutcome};
use studyloop_acceptance::selection::AuthMode;

const CELL: &str = "cli-tmux::pi";

/// A manifest field and how to lie about it.
type Edit = (&'static str, fn(&mut Value));

/// A run directory whose one results line names a sealed stub-provider bundle.
fn run_with_bundle(root: &Path) -> (RunLog, PathBuf) {
    let run = RunLog::open(root.join("run")).unwrap();
    let id = RunId::generate();
    let mut m = Manifest::new(&id, Tier::Acceptance, CELL, Surface::CliTmux);
    m.outcome = Outcome::Errored;
    m.auth_mode = Some(AuthMode::StubProvider);
    let bundle = BundleWriter::create(run.dir().join("evidence").join(id.as_str()), m)
        .unwrap()
        .finish()
        .unwrap();
    run.record_result(
        CELL,
        TrialOutcome::Failed,
        Some("boom"),
        Some(&bundle),
        None,
    )
    .unwrap();
    (run, bundle)
}

fn verify(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_studyloop-evidence"))
        .arg("verify")
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn edit_manifest(bundle: &Path, edit: impl FnOnce(&mut Value)) {
    let path = bundle.join("manifest.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

#[test]
fn verify_run_passes_a_manifest_as_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = run_with_bundle(tmp.path());
    let out = verify(&["--run".as_ref(), run.dir().as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("ok "), "{}", text(&out));
}

#[test]
fn verify_run_fails_a_manifest_edited_after_its_line_by_name() {
    let edits: [Edit; 3] = [
        ("outcome", |m| m["outcome"] = json!("completed")),
        ("auth_mode", |m| m["auth_mode"] = json!("real-auth")),
        ("cell", |m| m["cell"] = json!("cli-tmux::codex")),
    ];
    for (field, edit) in edits {
        let tmp = tempfile::tempdir().unwrap();
        let (run, bundle) = run_with_bundle(tmp.path());
        edit_manifest(&bundle, edit);
        // Self-consistency alone cannot see it: the inventory still matches.
        let alone = verify(&[bundle.as_os_str()]);
        assert_eq!(alone.status.code(), Some(0), "{field}: {}", text(&alone));
        let out = verify(&["--run".as_ref(), run.dir().as_os_str()]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "{field}: {said}");
        assert!(
            said.contains("recorded manifest_sha256") && said.contains("edited after its run"),
            "{field}: {said}"
        );
    }
}

#[test]
fn verify_run_fails_a_line_that_records_no_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = run_with_bundle(tmp.path());
    let path = run.dir().join("results.jsonl");
    let mut line: Value =
        serde_json::from_str(std::fs::read_to_string(&path).unwrap().trim()).unwrap();
    line.as_object_mut().unwrap().remove("manifest_sha256");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let out = verify(&["--run".as_ref(), run.dir().as_os_str()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("records no manifest_sha256"), "{said}");
}
