//! Ungated attacks on the guarded sweeper: a bind mount inside a scratch
//! HOME (its files must survive), a 100 000-deep tree on a 2 MiB thread with
//! 64 fds, and directories an unprivileged sweeper cannot use as they stand
//! (modes 000/100/300/400/600), swept as uid 65534 because root never meets
//! EACCES. The last two run in a child: the test binary re-executed under
//! `prlimit` or `setpriv`, choosing its part by [`CHILD`].

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rustix::fs::{Mode, OFlags, mkdirat, openat};
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::sweep::SweepError;

/// Set (to the test's name) in a re-executed child: run the body, not the setup.
const CHILD: &str = "STUDYLOOP_SWEEP_TEST_CHILD";
/// `nobody` on Debian-family systems: an unprivileged uid with no home.
const NOBODY: u32 = 65534;
const DEPTH: usize = 100_000;

fn fake_real_home() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fake-real-home-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn is_child(test: &str) -> bool {
    std::env::var_os(CHILD).is_some_and(|v| v == test)
}

/// Runs this test binary's `test` under `wrapper` (argv prefix), as a child.
fn rerun(wrapper: &[&str], exe: &Path, test: &str) -> Output {
    let (program, pre) = wrapper.split_first().unwrap();
    Command::new(program)
        .args(pre)
        .arg(exe)
        .arg(crate::reexec::libtest_name(module_path!(), test))
        .args(["--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD, test)
        .env("HOME", "/nonexistent")
        .current_dir("/")
        .output()
        .unwrap()
}

/// The `ROOT=<path>` line a child prints before it builds anything, so the
/// parent can clean up after a child that failed or crashed.
fn announced_root(out: &Output) -> Option<PathBuf> {
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        l.split_once("ROOT=")
            .map(|(_, root)| PathBuf::from(root.trim()))
    })
}

fn report(out: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// After a failed child: remove what it left with the system's `rm`, which
/// handles any depth and (as root) any mode; only a `/tmp/sl-acc-*` root.
fn remove_leftover(root: &Path) {
    let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if root.parent() == Some(Path::new("/tmp")) && name.starts_with("sl-acc-") && root.exists() {
        let _ = Command::new("chmod")
            .args(["-R", "u+rwx"])
            .arg(root)
            .status();
        let _ = Command::new("rm")
            .args(["-rf", "--one-file-system"])
            .arg(root)
            .status();
    }
}

/// A bind mount that is undone on drop, whatever the test did.
struct BindMount(PathBuf);

impl BindMount {
    /// `None` (with the reason) when mount(2) is not permitted here.
    fn new(source: &Path, target: &Path) -> Result<Self, String> {
        let out = Command::new("mount")
            .arg("--bind")
            .arg(source)
            .arg(target)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if out.status.success() {
            Ok(Self(target.to_owned()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    fn unmount(&self) {
        let done = Command::new("umount").arg(&self.0).status();
        if !done.is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

impl Drop for BindMount {
    fn drop(&mut self) {
        if mounted(&self.0) {
            self.unmount();
        }
    }
}

fn mounted(path: &Path) -> bool {
    Command::new("mountpoint")
        .arg("-q")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_bind_mount_inside_home_is_refused_and_its_files_survive() {
    let outside = tempfile::Builder::new()
        .prefix("bind-source-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    std::fs::create_dir(outside.path().join("sub")).unwrap();
    std::fs::write(outside.path().join("keep.txt"), "precious").unwrap();
    std::fs::write(outside.path().join("sub/deep.txt"), "precious").unwrap();
    let real = fake_real_home();
    let mut scratch = Scratch::create().unwrap();
    let root = scratch.root().to_owned();
    let target = scratch.home().join("mnt");
    std::fs::create_dir(&target).unwrap();
    let mount = match BindMount::new(outside.path(), &target) {
        Ok(mount) => mount,
        Err(why) => {
            // Only when the kernel forbids mount(2) here (no CAP_SYS_ADMIN).
            eprintln!("SKIPPED a_bind_mount_inside_home: mount(2) not permitted: {why}");
            return;
        }
    };
    let err = scratch.stop_and_sweep(real.path()).unwrap_err();
    assert!(
        matches!(&err, SweepError::MountInside { mount_point, .. } if *mount_point == target),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("umount") && message.contains(target.to_str().unwrap()),
        "{message}"
    );
    assert!(
        outside.path().join("keep.txt").is_file(),
        "a mounted file was deleted"
    );
    assert!(
        outside.path().join("sub/deep.txt").is_file(),
        "a mounted file was deleted"
    );
    assert!(
        scratch.sentinel_path().is_file(),
        "the tree was not left whole"
    );
    mount.unmount();
    drop(mount);
    scratch.stop_and_sweep(real.path()).unwrap();
    assert!(!root.exists());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("sub/deep.txt")).unwrap(),
        "precious"
    );
}

/// `d/d/d/…` `depth` levels below `dir`, through an `openat` chain: no
/// recursion, no long path, two fds at a time. A file every 1000 levels.
fn deep_tree(dir: &Path, depth: usize) {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut fd: OwnedFd = openat(rustix::fs::CWD, dir, flags, Mode::empty()).unwrap();
    for level in 0..depth {
        mkdirat(fd.as_fd(), "d", Mode::from_raw_mode(0o700)).unwrap();
        if level % 1000 == 0 {
            let file = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
            drop(openat(fd.as_fd(), "f", file, Mode::from_raw_mode(0o600)).unwrap());
        }
        fd = openat(fd.as_fd(), "d", flags, Mode::empty()).unwrap();
    }
}

#[test]
fn a_100k_deep_tree_sweeps_on_a_2mib_thread_with_64_fds() {
    const TEST: &str = "a_100k_deep_tree_sweeps_on_a_2mib_thread_with_64_fds";
    if is_child(TEST) {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(limit.current, Some(64), "the child runs with 64 fds");
        let sweeper = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let scratch = Scratch::create().unwrap();
                let root = scratch.root().to_owned();
                println!("ROOT={}", root.display());
                deep_tree(&scratch.home().join(".cache"), DEPTH);
                let result = scratch.close().map_err(|e| e.to_string());
                (root, result)
            })
            .unwrap();
        let (root, result) = sweeper.join().expect("the sweeper thread died");
        result.unwrap();
        assert!(!root.exists());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    // The private tmpfs below hides everything under /tmp, this test binary too
    // when the checkout itself lives there (a clone in /tmp ran "prlimit: failed
    // to execute …: No such file or directory"): the child then runs a copy kept
    // outside /tmp, in /dev/shm.
    let outside = exe.starts_with("/tmp").then(|| {
        let dir = tempfile::Builder::new()
            .prefix("sl-sweep-exe-")
            .tempdir_in("/dev/shm")
            .expect("a directory for the test binary outside /tmp");
        let copy = dir.path().join("acceptance_it");
        std::fs::copy(&exe, &copy).expect("copy the test binary out of /tmp");
        (dir, copy)
    });
    let exe = outside
        .as_ref()
        .map_or(exe.clone(), |(_, copy)| copy.clone());
    // On this project's CI disk (ext4 with `discard`) every rmdir costs ~3 ms
    // whoever calls it (`rm -rf` of this tree: 6 min), so the child gets a
    // private tmpfs on /tmp when it may mount one (root, or an unprivileged
    // user namespace); otherwise it runs on the real /tmp, slowly but honestly.
    let tmpfs = "mount -t tmpfs -o mode=1777,size=512m sl-sweep-test /tmp && exec \"$@\"";
    let userns = if rustix::process::geteuid().is_root() {
        "--mount"
    } else {
        "-rm"
    };
    let private = [
        "unshare",
        userns,
        "--propagation",
        "private",
        "sh",
        "-c",
        tmpfs,
        "sh",
    ];
    let limited = ["prlimit", "--nofile=64:64", "--"];
    let wrapper: Vec<&str> = private.iter().chain(&limited).copied().collect();
    let probe = Command::new("unshare")
        .args([userns, "--propagation", "private", "sh", "-c"])
        .arg(tmpfs.replace("exec \"$@\"", "true"))
        .status();
    let out = if probe.is_ok_and(|s| s.success()) {
        rerun(&wrapper, &exe, TEST)
    } else {
        eprintln!("no private tmpfs here: sweeping {DEPTH} levels on the real /tmp");
        rerun(&limited, &exe, TEST)
    };
    if let Some(root) = announced_root(&out) {
        let left = root.exists();
        remove_leftover(&root);
        assert!(
            !left,
            "the deep tree {} was left:\n{}",
            root.display(),
            report(&out)
        );
    }
    assert!(out.status.success(), "{}", report(&out));
    assert!(announced_root(&out).is_some(), "{}", report(&out));
}

/// Modes an unprivileged sweeper cannot list, enter or empty as they stand.
const LOCKED: [u32; 5] = [0o000, 0o100, 0o300, 0o400, 0o600];

#[test]
fn an_unprivileged_sweep_unlocks_000_100_300_400_600_directories() {
    const TEST: &str = "an_unprivileged_sweep_unlocks_000_100_300_400_600_directories";
    if rustix::process::geteuid().is_root() && !is_child(TEST) {
        // Root never meets EACCES: run the body as nobody, from a copy of this
        // binary nobody may execute.
        let bin = tempfile::Builder::new()
            .prefix("sl-sweep-bin-")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = bin.path().join("sweep-test");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let reuid = format!("--reuid={NOBODY}");
        let regid = format!("--regid={NOBODY}");
        let wrapper = ["setpriv", &reuid, &regid, "--clear-groups"];
        let out = rerun(&wrapper, &exe, TEST);
        if let Some(root) = announced_root(&out) {
            let left = root.exists();
            remove_leftover(&root);
            assert!(!left, "{} was left:\n{}", root.display(), report(&out));
        }
        assert!(out.status.success(), "{}", report(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&format!("UID={NOBODY}")),
            "the body did not run as {NOBODY}:\n{}",
            report(&out)
        );
        return;
    }
    println!("UID={}", rustix::process::geteuid().as_raw());
    let scratch = Scratch::create().unwrap();
    let root = scratch.root().to_owned();
    println!("ROOT={}", root.display());
    let locked = scratch.home().join("locked");
    std::fs::create_dir(&locked).unwrap();
    for mode in LOCKED {
        let dir = locked.join(format!("m{mode:03o}"));
        std::fs::create_dir_all(dir.join("inner/innermost")).unwrap();
        std::fs::write(dir.join("file"), "x").unwrap();
        std::fs::write(dir.join("inner/file"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("inner/link")).unwrap();
        // Deepest first, so the outer modes do not stop the inner chmods.
        for sub in [dir.join("inner/innermost"), dir.join("inner"), dir.clone()] {
            std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
    // A locked directory as the last component of a chain, too.
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    scratch.close().unwrap();
    assert!(!root.exists());
}

/// An attacker swapping directories of the tree for symlinks to an outside
/// canary (and back) while the sweep runs: the sweep may refuse or fail, but
/// nothing outside the tree is ever deleted, and once the attacker stops a
/// retry finishes the job.
#[test]
fn directories_swapped_for_symlinks_mid_sweep_never_reach_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    const ROUNDS: usize = 10;
    const DIRS: usize = 60;
    let canary = tempfile::Builder::new()
        .prefix("swap-canary-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    for i in 0..20 {
        std::fs::create_dir_all(canary.path().join(format!("d{i}"))).unwrap();
        std::fs::write(canary.path().join(format!("d{i}/f")), "canary").unwrap();
    }
    let real = fake_real_home();
    let mut refusals = 0;
    for _ in 0..ROUNDS {
        let mut scratch = Scratch::create().unwrap();
        let base = scratch.home().join("race");
        for i in 0..DIRS {
            let dir = base.join(format!("d{i}"));
            std::fs::create_dir_all(dir.join("inner")).unwrap();
            for j in 0..5 {
                std::fs::write(dir.join(format!("inner/f{j}")), "x").unwrap();
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let attacker = {
            let (stop, base, target) = (stop.clone(), base.clone(), canary.path().to_owned());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let dir = base.join(format!("d{}", i % DIRS));
                    let aside = base.join(format!("aside{}", i % DIRS));
                    if std::fs::rename(&dir, &aside).is_ok() {
                        let _ = std::os::unix::fs::symlink(&target, &dir);
                        std::thread::yield_now();
                        let _ = std::fs::remove_file(&dir);
                        let _ = std::fs::rename(&aside, &dir);
                    }
                    i += 1;
                }
            })
        };
        let first = scratch.stop_and_sweep(real.path());
        stop.store(true, Ordering::Relaxed);
        attacker.join().unwrap();
        if let Err(err) = first {
            // Past the sentinel a failed sweep leaves the rest for inspection.
            eprintln!("refused mid-race: {err}");
            refusals += 1;
            remove_leftover(scratch.root());
        }
        assert!(!scratch.root().exists());
        let root = scratch.root().to_owned();
        // Swept (or removed above): nothing is left for its Drop to do.
        std::mem::forget(scratch);
        assert!(!root.exists());
        for i in 0..20 {
            let f = canary.path().join(format!("d{i}/f"));
            assert!(
                f.is_file(),
                "{} was deleted through a swapped symlink",
                f.display()
            );
        }
    }
    eprintln!("{ROUNDS} rounds, {refusals} refused mid-race, 0 canary files lost");
    assert!(
        refusals < ROUNDS,
        "every round refused: the walk cannot finish under a racer"
    );
}
