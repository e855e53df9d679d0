//! Retention: only run-id-named bundle directories with a manifest, older than the
//! cut-off, directly under the root, are ever deleted (with their arbitration sibling);
//! symlinks are never followed; a dry run touches nothing.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use jiff::Timestamp;
use studyloop_acceptance::evidence::RunId;
use studyloop_uat::prune;

const OLD: &str = "20200101T000000Z-0123abcd";
const OLD_NO_MANIFEST: &str = "20200102T000000Z-0123abcd";
const OLD_LINK: &str = "20200103T000000Z-0123abcd";

fn bundle_dir(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("manifest.json"), "{}\n").unwrap();
    fs::write(dir.join("transcript.jsonl"), "{}\n").unwrap();
}

/// A durable root holding one of everything prune must tell apart.
fn world() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    String,
) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("uat");
    let outside = tmp.path().join("outside-bundle");
    bundle_dir(&outside);
    bundle_dir(&root.join(OLD));
    fs::create_dir_all(root.join(format!("{OLD}.arbitration/seats"))).unwrap();
    fs::write(root.join(format!("{OLD}.arbitration/ARBITRATION.md")), "x").unwrap();
    let fresh = RunId::generate().to_string();
    bundle_dir(&root.join(&fresh));
    fs::create_dir_all(root.join(OLD_NO_MANIFEST)).unwrap();
    bundle_dir(&root.join("notes-from-alice"));
    symlink(&outside, root.join(OLD_LINK)).unwrap();
    fs::write(
        root.join("20200104T000000Z-0123abcd"),
        "a file, not a bundle",
    )
    .unwrap();
    (tmp, root, outside, fresh)
}

#[test]
fn the_plan_names_only_old_real_bundles_and_says_why_others_stay() {
    let (_tmp, root, _outside, _fresh) = world();
    let plan = prune::plan(&root, Duration::from_secs(90 * 86_400), Timestamp::now()).unwrap();
    assert_eq!(plan.delete.len(), 1, "{plan:#?}");
    assert_eq!(plan.delete[0].run_id, OLD);
    assert!(plan.delete[0].age_days > 365);
    assert_eq!(
        plan.delete[0].arbitration,
        Some(root.join(format!("{OLD}.arbitration")))
    );
    assert_eq!(plan.kept, 1);
    let skipped: Vec<&str> = plan.skipped.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        skipped,
        [
            OLD_NO_MANIFEST,
            OLD_LINK,
            "20200104T000000Z-0123abcd",
            "notes-from-alice"
        ]
    );
    let why = |name: &str| {
        plan.skipped
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
            .clone()
    };
    assert!(why(OLD_LINK).contains("symlink"));
    assert!(why(OLD_NO_MANIFEST).contains("no manifest.json"));
    assert!(why("notes-from-alice").contains("not a run id"));
}

#[test]
fn apply_deletes_exactly_the_plan_and_never_follows_a_symlink() {
    let (_tmp, root, outside, fresh) = world();
    let plan = prune::plan(&root, Duration::from_secs(90 * 86_400), Timestamp::now()).unwrap();
    let removed = prune::apply(&plan).unwrap();
    assert_eq!(
        removed,
        [root.join(OLD), root.join(format!("{OLD}.arbitration"))]
    );
    assert!(!root.join(OLD).exists() && !root.join(format!("{OLD}.arbitration")).exists());
    for stays in [
        fresh.as_str(),
        OLD_NO_MANIFEST,
        "notes-from-alice",
        "20200104T000000Z-0123abcd",
    ] {
        assert!(root.join(stays).exists(), "{stays} was removed");
    }
    assert!(
        fs::symlink_metadata(root.join(OLD_LINK))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        outside.join("manifest.json").exists(),
        "the symlink's target is untouched"
    );
}

#[test]
fn a_symlinked_or_missing_root_is_refused() {
    let (tmp, root, _outside, _fresh) = world();
    let link = tmp.path().join("root-link");
    symlink(&root, &link).unwrap();
    let err = prune::plan(&link, Duration::from_secs(1), Timestamp::now()).unwrap_err();
    assert!(err.to_string().contains("is a symlink"), "{err}");
    let err = prune::plan(
        &tmp.path().join("nope"),
        Duration::from_secs(1),
        Timestamp::now(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn the_command_is_a_dry_run_unless_told_to_apply() {
    let (_tmp, root, _outside, _fresh) = world();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_studyloop-uat"))
            .env_clear()
            .args(["prune", "--older-than", "90d", "--root"])
            .arg(&root)
            .args(extra)
            .output()
            .unwrap()
    };
    let dry = run(&[]);
    let stdout = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(
        stdout.contains("dry run (pass --apply to delete)")
            && stdout.contains(&format!("would delete {OLD}")),
        "{stdout}"
    );
    assert!(root.join(OLD).exists(), "a dry run deletes nothing");
    let applied = run(&["--apply"]);
    assert!(applied.status.success());
    assert!(String::from_utf8_lossy(&applied.stdout).contains("removed 2 director(ies)"));
    assert!(!root.join(OLD).exists());

    let bad = Command::new(env!("CARGO_BIN_EXE_studyloop-uat"))
        .env_clear()
        .args(["prune", "--older-than", "3 months"])
        .arg("--root")
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("invalid age `3 months`") && stderr.lines().count() == 1,
        "{stderr}"
    );
}
