//! Unit tests of the bundle writer, the path guard and `verify`.

use std::os::unix::fs::PermissionsExt;

use std::path::PathBuf;

use super::*;
use crate::evidence::{Manifest, RunId, Surface, Tier, verify};

fn manifest() -> Manifest {
    Manifest::new(
        &RunId::generate(),
        Tier::Acceptance,
        "probe::codex",
        Surface::Probe,
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn writes_private_files_and_a_manifest_that_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("evidence/run");
    let mut w = BundleWriter::create(&dir, manifest()).unwrap();
    w.write_file("probe.txt", b"codex 1.2.3\n").unwrap();
    w.write_json("turns/1.json", &serde_json::json!({"prompt": "hi"}))
        .unwrap();
    w.manifest_mut().outcome = Outcome::Completed;
    let out = w.finish().unwrap();
    assert_eq!(mode(&out), 0o700);
    assert_eq!(mode(&out.join("turns")), 0o700);
    for f in ["probe.txt", "turns/1.json", MANIFEST_NAME] {
        assert_eq!(mode(&out.join(f)), 0o600, "{f}");
    }
    let text = std::fs::read_to_string(out.join(MANIFEST_NAME)).unwrap();
    let m: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(m.file_inventory.len(), 2);
    assert_eq!(
        m.file_inventory["probe.txt"],
        crate::evidence::hash_file(&out.join("probe.txt")).unwrap()
    );
    let report = verify(&out).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.matched, 2);
    // No temp file is left beside the final ones.
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn an_existing_dir_is_tightened() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("loose");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    BundleWriter::create(&dir, manifest())
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(mode(&dir), 0o700);
}

#[test]
fn verify_reports_every_mismatch_missing_and_extra_file() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = BundleWriter::create(tmp.path(), manifest()).unwrap();
    for f in ["a.txt", "b.txt", "c.txt"] {
        w.write_file(f, f.as_bytes()).unwrap();
    }
    let dir = w.finish().unwrap();
    std::fs::write(dir.join("a.txt"), b"tampered").unwrap();
    std::fs::remove_file(dir.join("b.txt")).unwrap();
    std::fs::write(dir.join("d.txt"), b"new").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.join("link")).unwrap();
    let report = verify(&dir).unwrap();
    assert_eq!(report.matched, 1);
    assert_eq!(report.mismatched.len(), 1);
    assert_eq!(report.mismatched[0].path, "a.txt");
    assert_eq!(report.missing, ["b.txt"]);
    assert_eq!(report.extra, ["d.txt", "link"]);
    assert!(!report.is_clean());
}

#[test]
fn unsafe_paths_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut w = BundleWriter::create(tmp.path(), manifest()).unwrap();
    std::os::unix::fs::symlink(outside.path(), tmp.path().join("escape")).unwrap();
    for bad in [
        "",
        "/etc/passwd",
        "../x",
        "a/../../x",
        "./x",
        "manifest.json",
    ] {
        assert!(
            matches!(
                w.write_file(bad, b"x"),
                Err(EvidenceError::UnsafePath { .. })
            ),
            "{bad:?} accepted"
        );
    }
    assert!(matches!(
        w.write_file("escape/x", b"x"),
        Err(EvidenceError::SymlinkEscape { .. })
    ));
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    std::fs::remove_file(tmp.path().join("escape")).unwrap();
    w.finish().unwrap();
}

#[test]
fn dropping_an_unfinished_writer_still_leaves_an_errored_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let mut w = BundleWriter::create(tmp.path(), manifest()).unwrap();
        w.manifest_mut().outcome = Outcome::Completed;
        w.write_file("partial.txt", b"turn 1").unwrap();
    }
    let m: Manifest =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join(MANIFEST_NAME)).unwrap())
            .unwrap();
    assert_eq!(m.outcome, Outcome::Errored);
    assert_eq!(m.file_inventory.len(), 1);
    assert!(
        m.notes[0].contains("before the run finished"),
        "{:?}",
        m.notes
    );
}

#[test]
fn verify_rejects_a_future_schema_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join(MANIFEST_NAME), r#"{"schema_version": 2}"#).unwrap();
    let err = verify(tmp.path()).unwrap_err().to_string();
    assert!(
        err.contains("schema_version 2") && err.contains("version 1"),
        "{err}"
    );
}

#[test]
fn the_reserved_manifest_name_is_refused_in_every_spelling() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = BundleWriter::create(tmp.path().join("b"), manifest()).unwrap();
    for bad in [
        "manifest.json/",
        "manifest.json/.",
        "manifest.json//",
        "./manifest.json",
        "manifest.json/x",
        "a//b",
        "x/",
        "x/.",
    ] {
        let err = w.write_file(bad, b"forged").unwrap_err();
        assert!(
            matches!(err, EvidenceError::UnsafePath { .. }),
            "{bad:?}: {err}"
        );
    }
    assert!(
        !w.dir().join(MANIFEST_NAME).exists(),
        "no manifest before finish()"
    );
    w.write_file("sub/manifest.json", b"a nested name is an ordinary file")
        .unwrap();
    let dir = w.finish().unwrap();
    assert!(verify(&dir).unwrap().is_clean());
}

#[test]
fn a_bundle_dir_with_content_is_never_merged_into() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    BundleWriter::create(&dir, manifest())
        .unwrap()
        .finish()
        .unwrap();
    let err = BundleWriter::create(&dir, manifest()).unwrap_err();
    assert!(matches!(err, EvidenceError::Taken { .. }), "{err}");
    std::os::unix::fs::symlink(&dir, tmp.path().join("link")).unwrap();
    assert!(BundleWriter::create(tmp.path().join("link"), manifest()).is_err());
}

fn clean_bundle(root: &Path) -> PathBuf {
    let mut w = BundleWriter::create(root.join("b"), manifest()).unwrap();
    w.write_file("notes\u{FFFD}.txt", b"legit").unwrap();
    w.write_file("db/topics.json", b"[]").unwrap();
    let dir = w.finish().unwrap();
    assert!(verify(&dir).unwrap().is_clean());
    dir
}

#[test]
fn verify_reports_modes_links_dirs_raw_names_and_special_files() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = clean_bundle(tmp.path());
    // A raw 0xFF name decodes lossily to the legitimate `notes\u{FFFD}.txt`.
    let raw = dir.join(OsStr::from_bytes(b"notes\xFF.txt"));
    std::fs::write(&raw, b"hidden").unwrap();
    std::fs::set_permissions(&raw, std::fs::Permissions::from_mode(0o600)).unwrap();
    let report = verify(&dir).unwrap();
    assert_eq!(report.extra, ["notes\\xff.txt"], "{report:?}");
    assert!(report.irregular[0].contains("not UTF-8"), "{report:?}");
    assert_eq!(report.matched, 2, "the legitimate file still matches");
    std::fs::remove_file(&raw).unwrap();

    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.join("db"), std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::set_permissions(
        dir.join("db/topics.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::create_dir(dir.join("empty")).unwrap();
    std::fs::set_permissions(dir.join("empty"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::hard_link(dir.join("notes\u{FFFD}.txt"), tmp.path().join("outside")).unwrap();
    crate::private_fs::tests::fifo(&dir.join("pipe"));
    let report = verify(&dir).unwrap();
    assert_eq!(
        report.wrong_modes,
        [
            ".: mode 0755, want 0700",
            "db/: mode 0750, want 0700",
            "db/topics.json: mode 0644, want 0600"
        ],
        "{report:?}"
    );
    assert_eq!(report.unexpected_dirs, ["empty/"]);
    assert_eq!(report.hard_links.len(), 1, "{report:?}");
    assert!(report.hard_links[0].starts_with("notes\u{FFFD}.txt: 2 hard links"));
    assert_eq!(report.irregular, ["pipe: a FIFO"]);
    assert_eq!(report.extra, ["pipe"]);
    assert!(!report.is_clean());
    assert_eq!(report.problems().len(), 7, "{:#?}", report.problems());
}

#[test]
fn a_fifo_or_symlink_manifest_is_an_error_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = clean_bundle(tmp.path());
    let real = tmp.path().join("real.json");
    std::fs::rename(dir.join(MANIFEST_NAME), &real).unwrap();
    std::os::unix::fs::symlink(&real, dir.join(MANIFEST_NAME)).unwrap();
    let err = verify(&dir).unwrap_err().to_string();
    assert!(err.contains("a symlink, not a regular file"), "{err}");
    std::fs::remove_file(dir.join(MANIFEST_NAME)).unwrap();
    crate::private_fs::tests::fifo(&dir.join(MANIFEST_NAME));
    let err = verify(&dir).unwrap_err().to_string();
    assert!(err.contains("a FIFO, not a regular file"), "{err}");
}

#[test]
fn a_bundle_dir_that_is_a_file_or_a_link_to_an_empty_dir_is_taken_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"someone's file").unwrap();
    let err = BundleWriter::create(&file, manifest()).unwrap_err();
    assert!(matches!(err, EvidenceError::Taken { .. }), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"someone's file");
    // An empty directory reached through a link would pass the emptiness
    // check; the link itself is what is refused, and the target keeps its mode.
    let target = tmp.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = BundleWriter::create(&link, manifest()).unwrap_err();
    assert!(matches!(err, EvidenceError::Taken { .. }), "{err}");
    assert_eq!(mode(&target), 0o755);
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}
