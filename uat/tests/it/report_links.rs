//! `studyloop-uat report` never reads a bundle's steps through a symlink (issue 34):
//! a `lifecycle/` directory that is a link to one outside the run directory, and a
//! step file inside a real `lifecycle/` that links to an outside file, must leave no
//! trace of the outside text in any page, plain or `--redacted`, while the bundle's
//! own steps still show.

use std::path::Path;

use serde_json::json;
use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{ResultMeta, RunLog, TrialOutcome};

use super::report::{pages, report};

const CANARY: &str = "LIFECYCLE-OUTSIDE-CANARY-91c2";
const OWN_STEP: &str = "own-step-harness-ready";

/// A sealed bundle with no `steps.json` (so the report reads `lifecycle/`), holding
/// `lifecycle/01-ready.json` when `own` is set.
fn bundle(root: &Path, cell: &str, own: bool) -> std::path::PathBuf {
    let run_id = RunId::generate();
    let mut m = Manifest::new(&run_id, Tier::Uat, cell, Surface::CliTmux);
    m.outcome = Outcome::Completed;
    let mut w = BundleWriter::create(root.join(run_id.as_str()), m).unwrap();
    if own {
        w.write_json(
            "lifecycle/01-ready.json",
            &json!({"n": 1, "kind": "step", "name": OWN_STEP, "ok": true, "elapsed_ms": 3}),
        )
        .unwrap();
    }
    w.write_file("screens/turn-1.txt", b"hello").unwrap();
    w.finish().unwrap()
}

#[test]
fn issue34_the_report_reads_no_step_through_a_symlinked_lifecycle_dir_or_file() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let step = json!({"n": 1, "kind": "step", "name": CANARY, "ok": false, "error": CANARY});
    std::fs::write(outside.join("01-outside.json"), step.to_string()).unwrap();
    std::fs::write(outside.join("02-outside.json"), step.to_string()).unwrap();

    let run = RunLog::open(tmp.path().join("runs/run-1")).unwrap();
    let evidence = run.dir().join("evidence");
    // The whole `lifecycle/` is a link to the outside directory.
    let linked_dir = bundle(&evidence, "cli-tmux::pi", false);
    std::os::unix::fs::symlink(&outside, linked_dir.join("lifecycle")).unwrap();
    // A real `lifecycle/` with one of its step files a link to an outside file.
    let linked_file = bundle(&evidence, "cli-tmux::claude", true);
    std::os::unix::fs::symlink(
        outside.join("02-outside.json"),
        linked_file.join("lifecycle/02-link.json"),
    )
    .unwrap();
    let meta = ResultMeta {
        attempt: Some(1),
        elapsed_ms: Some(10),
        category: None,
    };
    for (trial, dir) in [
        ("cli-tmux::pi", &linked_dir),
        ("cli-tmux::claude", &linked_file),
    ] {
        run.record_result_meta(trial, TrialOutcome::Passed, None, Some(dir), None, meta)
            .unwrap();
    }

    for variant in [None, Some("--redacted")] {
        let out = tmp.path().join(format!("site-{}", variant.is_some()));
        let mut args = vec![run.dir().as_os_str(), "--out".as_ref(), out.as_os_str()];
        args.extend(variant.map(std::ffi::OsStr::new));
        let o = report(&args, tmp.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let pages = pages(&out);
        for (page, html) in &pages {
            assert!(
                !html.contains(CANARY),
                "{variant:?}: {} shows a step read through a symlink out of the bundle",
                page.display()
            );
        }
        assert!(pages.len() >= 3, "{variant:?}: index and a page per cell");
        let own = std::fs::read_to_string(out.join("cells/cli-tmux..claude.html")).unwrap();
        assert!(
            own.contains(OWN_STEP),
            "{variant:?}: the bundle's own step is shown"
        );
    }
}
