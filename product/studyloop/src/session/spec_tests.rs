//! Tests of [`super::spec`]: each bound and each hostile kind an agent can
//! leave in the spec dir.

use std::time::{Duration, SystemTime};

use super::spec::{self, MAX_BYTES, MAX_ENTRIES};

fn session() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("study-x-1");
    std::fs::create_dir_all(&dir).unwrap();
    spec::ensure(&dir).unwrap();
    (t, dir)
}

fn set_mtime(path: &std::path::Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn ensure_hides_the_dir_from_git_and_absent_is_empty() {
    let (_t, dir) = session();
    let sd = spec::spec_dir(&dir);
    assert_eq!(
        std::fs::read_to_string(sd.join(".gitignore")).unwrap(),
        "*\n"
    );
    let c = spec::capture(&dir);
    assert_eq!(c, spec::Captures::default(), "the .gitignore is not a spec");
    std::fs::remove_dir_all(&sd).unwrap();
    assert_eq!(spec::capture(&dir), spec::Captures::default());
}

#[test]
fn keeps_the_ten_oldest_by_mtime_then_name() {
    let (_t, dir) = session();
    let sd = spec::spec_dir(&dir);
    // 11 files: f00 is the newest, so it is the one dropped; g-a and g-b share
    // an mtime and are ordered by name.
    for i in 0..11_u64 {
        let p = sd.join(format!("f{i:02}.md"));
        std::fs::write(&p, format!("spec {i}")).unwrap();
        set_mtime(&p, 2_000_000 - i * 10);
    }
    for n in ["g-b.md", "g-a.md"] {
        let p = sd.join(n);
        std::fs::write(&p, n).unwrap();
        set_mtime(&p, 1_000_000);
    }
    let c = spec::capture(&dir);
    let names: Vec<&str> = c.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.len(), MAX_ENTRIES);
    assert_eq!(
        names,
        [
            "g-a.md", "g-b.md", "f10.md", "f09.md", "f08.md", "f07.md", "f06.md", "f05.md",
            "f04.md", "f03.md"
        ]
    );
    let dropped: Vec<&str> = c.skipped.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(dropped, ["f02.md", "f01.md", "f00.md"]);
    assert!(c.skipped[0].reason.contains("10-entry bound"));
    assert_eq!(
        c.entries[0].modified.as_deref(),
        Some("1970-01-12T13:46:40Z")
    );
    assert_eq!(c.entries[0].content.as_deref(), Some("g-a.md"));
    assert_eq!(c.entries[0].reason, None);
}

#[test]
fn a_huge_file_is_kept_truncated_with_the_reason() {
    let (_t, dir) = session();
    let sd = spec::spec_dir(&dir);
    // 1 MiB of text whose cut at 64 KiB falls inside a 3-byte character.
    let mut text = "a".repeat(MAX_BYTES - 1);
    text.push_str(&"€".repeat(400_000));
    std::fs::write(sd.join("big.md"), &text).unwrap();
    let c = spec::capture(&dir);
    let e = &c.entries[0];
    assert!(e.truncated);
    assert_eq!(e.size, Some(text.len() as u64));
    assert_eq!(e.encoding.as_deref(), Some("utf8"));
    let kept = e.content.as_deref().unwrap();
    assert_eq!(kept.len(), MAX_BYTES - 1, "whole characters only");
    assert!(
        e.reason
            .as_deref()
            .unwrap()
            .contains("truncated to the first 65536 bytes")
    );
    // Exactly the bound is kept whole.
    std::fs::write(sd.join("big.md"), "b".repeat(MAX_BYTES)).unwrap();
    let e = spec::capture(&dir).entries.remove(0);
    assert!(!e.truncated && e.reason.is_none());
    assert_eq!(e.content.unwrap().len(), MAX_BYTES);
}

#[test]
fn non_utf8_is_kept_as_base64() {
    let (_t, dir) = session();
    let sd = spec::spec_dir(&dir);
    std::fs::write(sd.join("bin.dat"), [0xff, 0xfe, b'h', b'i']).unwrap();
    let e = spec::capture(&dir).entries.remove(0);
    assert_eq!(e.encoding.as_deref(), Some("base64"));
    assert_eq!(e.content.as_deref(), Some("//5oaQ=="));
    assert_eq!(e.reason.as_deref(), Some("not UTF-8; kept as base64"));
    assert_eq!(spec::base64(b"abc"), "YWJj");
    assert_eq!(spec::base64(b"ab"), "YWI=");
    assert_eq!(spec::base64(b""), "");
}

#[test]
fn symlinks_fifos_and_dirs_are_skipped_by_kind_never_opened() {
    let (_t, dir) = session();
    let sd = spec::spec_dir(&dir);
    std::os::unix::fs::symlink("/etc/passwd", sd.join("passwd.md")).unwrap();
    studyloop_regular_file::make_fifo_for_tests(&sd.join("pipe.md"));
    std::fs::create_dir(sd.join("nested")).unwrap();
    std::fs::write(sd.join("nested/inner.md"), "inner").unwrap();
    std::fs::write(sd.join("ok.md"), "the plan").unwrap();
    // A FIFO that nobody writes would block a plain open forever: run the
    // capture on a thread and give it a deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || tx.send(spec::capture(&d)).unwrap());
    let c = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("capture hung on the FIFO");
    assert_eq!(c.entries.len(), 1, "{c:?}");
    assert_eq!(c.entries[0].content.as_deref(), Some("the plan"));
    let mut skipped: Vec<(String, String)> = c
        .skipped
        .iter()
        .map(|s| (s.name.clone(), s.reason.clone()))
        .collect();
    skipped.sort();
    assert_eq!(skipped.len(), 3);
    assert!(skipped[0].0 == "nested" && skipped[0].1.starts_with("a directory"));
    assert!(skipped[1].0 == "passwd.md" && skipped[1].1.starts_with("a symlink"));
    assert!(skipped[2].0 == "pipe.md" && skipped[2].1.starts_with("a FIFO"));
    let json = serde_json::to_string(&c).unwrap();
    assert!(!json.contains("root:"), "/etc/passwd was read: {json}");
}

#[test]
fn a_spec_dir_replaced_by_a_symlink_is_not_followed() {
    let (t, dir) = session();
    let sd = spec::spec_dir(&dir);
    std::fs::remove_dir_all(&sd).unwrap();
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("secret.md"), "secret").unwrap();
    std::os::unix::fs::symlink(&elsewhere, &sd).unwrap();
    let c = spec::capture(&dir);
    assert!(c.entries.is_empty() && c.skipped.is_empty());
    assert!(
        c.error.as_deref().unwrap().contains("not followed"),
        "{c:?}"
    );
}

#[test]
fn an_unreadable_file_is_kept_as_its_reason() {
    use std::os::unix::fs::PermissionsExt;
    let (_t, dir) = session();
    let sd = spec::spec_dir(&dir);
    let p = sd.join("locked.md");
    std::fs::write(&p, "x").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&p).is_ok() {
        // Running as root: permissions do not bind; nothing to check here.
        return;
    }
    let e = spec::capture(&dir).entries.remove(0);
    assert_eq!((&e.content, &e.encoding), (&None, &None));
    assert!(
        e.reason.as_deref().unwrap().starts_with("unreadable:"),
        "{e:?}"
    );
}
