//! The walk's own mount guard, for a mount `/proc/self/mountinfo` did not
//! show (made after the up-front check, or no `/proc`): the walk alone must
//! refuse to enter it, and the mounted files survive. Needs mount(2) (root).

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Command;

use rustix::fs::{Mode, OFlags, openat};

use super::SweepError;
use super::walk::remove_contents;

struct Unmount<'a>(&'a Path);

impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(self.0).status();
        if !ok.is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(self.0).status();
        }
    }
}

#[test]
fn the_walk_refuses_a_bind_mount_of_the_same_filesystem_and_keeps_the_ownership_marks() {
    let tree = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep.txt"), "precious").unwrap();
    let point = tree.path().join("a/b/mnt");
    std::fs::create_dir_all(&point).unwrap();
    std::fs::write(tree.path().join("a/file"), "x").unwrap();
    // The ownership marks, which a sweep stopped part-way must leave.
    std::fs::create_dir(tree.path().join("home")).unwrap();
    std::fs::write(tree.path().join("home/sentinel"), "token").unwrap();
    std::fs::write(tree.path().join("owner"), "record").unwrap();
    for i in 0..20 {
        std::fs::write(tree.path().join(format!("z{i}")), "x").unwrap();
    }
    let mounted = Command::new("mount")
        .arg("--bind")
        .arg(outside.path())
        .arg(&point)
        .output()
        .unwrap();
    if !mounted.status.success() {
        eprintln!(
            "SKIPPED the_walk_refuses_a_bind_mount: mount(2) not permitted: {}",
            String::from_utf8_lossy(&mounted.stderr).trim()
        );
        return;
    }
    let _unmount = Unmount(&point);
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let root: OwnedFd = openat(rustix::fs::CWD, tree.path(), flags, Mode::empty()).unwrap();
    let keep = [Path::new("home/sentinel"), Path::new("owner")];
    let err = remove_contents(&root, tree.path(), &keep).unwrap_err();
    assert!(
        matches!(&err, SweepError::CrossesMount { path, .. } if *path == point),
        "{err}"
    );
    assert!(err.to_string().contains("mount id"), "{err}");
    assert!(outside.path().join("keep.txt").is_file());
    assert!(
        tree.path().join("home/sentinel").is_file(),
        "the sentinel went first"
    );
    assert!(
        tree.path().join("owner").is_file(),
        "the owner record went first"
    );
}
