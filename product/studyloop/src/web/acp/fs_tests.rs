//! Attacks on the ACP fs confinement (`fs.rs`): a flipper thread that swaps a
//! session-dir component between a directory and a symlink to outside, a
//! planted hardlink, a FIFO and a device. Every figure is asserted as zero.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::fs::{FsError, SessionFs};
use super::limit_tests::mkfifo;

/// How many read+write attempts the race test makes (a few seconds on 2 cores).
const TRIES: usize = 3000;
/// Swaps the flipper must make before the race counts: each request then meets both
/// states and the swaps between them many times over.
const MIN_FLIPS: u64 = 1000;

struct World {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

/// `root/sub` a real directory with `secret.txt` = INSIDE, `root/alt` a symlink
/// to `outside/` whose `secret.txt` = OUTSIDE.
fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("session");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(root.join("sub")).expect("mkdir sub");
    std::fs::create_dir(&outside).expect("mkdir outside");
    std::fs::write(root.join("sub/secret.txt"), "INSIDE").expect("seed inside");
    std::fs::write(outside.join("secret.txt"), "OUTSIDE").expect("seed outside");
    std::os::unix::fs::symlink(&outside, root.join("alt")).expect("symlink");
    World {
        _dir: dir,
        root,
        outside,
    }
}

#[test]
fn a_component_flipped_to_a_symlink_never_lets_a_read_or_write_escape() {
    let w = world();
    race(&w, &SessionFs::new(&w.root).expect("root"), "openat2");
}

#[test]
fn the_component_walk_fallback_never_lets_a_read_or_write_escape() {
    let w = world();
    race(
        &w,
        &SessionFs::new(&w.root).expect("root").walk_only(),
        "walk",
    );
}

/// At least [`TRIES`] reads and writes through `fs` while a flipper swaps `sub` between
/// the directory and the symlink to outside; asserts zero escapes.
fn race(w: &World, fs: &SessionFs, how: &str) {
    let stop = Arc::new(AtomicBool::new(false));
    // Shared so the requester keeps going until the flipper has really run: on a loaded
    // machine the flipper thread may get only a few slices in TRIES requests.
    let flipped = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let (sub, alt) = (w.root.join("sub"), w.root.join("alt"));
    let flipper = {
        let (stop, flipped) = (stop.clone(), flipped.clone());
        std::thread::spawn(move || {
            let mut flips = 0_u64;
            while !stop.load(Ordering::Relaxed) {
                // Atomic exchange: `sub` is the directory or the outside symlink.
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &sub,
                    rustix::fs::CWD,
                    &alt,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("exchange");
                flips += 1;
                flipped.store(flips, Ordering::Relaxed);
                // Hold each state briefly so requests meet both, and the swaps in between.
                for _ in 0..(flips % 7) * 200 {
                    std::hint::spin_loop();
                }
                std::thread::yield_now();
            }
            flips
        })
    };
    let (mut read_escapes, mut write_escapes, mut reads_ok, mut writes_ok) = (0, 0, 0, 0);
    let escaped = w.outside.join("w.txt");
    let mut i = 0;
    // At least TRIES requests; more (for up to 30 s) until both kinds of request also
    // succeeded inside and the flipper made MIN_FLIPS swaps, so a loaded machine cannot
    // turn this into a no-op.
    let started = std::time::Instant::now();
    let more_needed = |reads_ok: u32, writes_ok: u32| {
        reads_ok < 20 || writes_ok < 20 || flipped.load(Ordering::Relaxed) < MIN_FLIPS
    };
    while i < TRIES
        || (more_needed(reads_ok, writes_ok)
            && started.elapsed() < std::time::Duration::from_secs(30))
    {
        i += 1;
        match fs.read(&w.root.join("sub/secret.txt"), None, None) {
            Ok(text) if text.contains("OUTSIDE") => read_escapes += 1,
            Ok(_) => reads_ok += 1,
            Err(_) => {}
        }
        if fs.write(&w.root.join("sub/w.txt"), "written").is_ok() {
            writes_ok += 1;
        }
        if escaped.exists() {
            write_escapes += 1;
            std::fs::remove_file(&escaped).expect("clean the escape");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().expect("flipper");
    eprintln!(
        "race ({how}): {i} tries, {flips} flips, {reads_ok} inside reads, {writes_ok} inside writes, \
         {read_escapes} read escapes, {write_escapes} write escapes"
    );
    assert!(
        flips >= MIN_FLIPS,
        "the flipper barely ran ({flips} flips in 30 s)"
    );
    assert!(
        reads_ok > 0 && writes_ok > 0,
        "nothing succeeded ({reads_ok} reads, {writes_ok} writes): the test proves nothing"
    );
    assert_eq!(
        (read_escapes, write_escapes),
        (0, 0),
        "reads of outside content, writes landing outside"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&w.outside)
        .expect("outside")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers, [std::ffi::OsString::from("secret.txt")]);
}

#[test]
fn a_hardlink_to_an_outside_file_is_not_read() {
    let w = world();
    let fs = SessionFs::new(&w.root).expect("root");
    std::fs::hard_link(w.outside.join("secret.txt"), w.root.join("planted.txt")).expect("hardlink");
    let planted = w.root.join("planted.txt");
    let got = fs.read(&planted, None, None);
    assert!(
        got.is_err(),
        "a file with two links must be refused: {got:?}"
    );
    let msg = got.expect_err("refused").to_string();
    assert!(msg.contains("planted.txt") && msg.contains("link"), "{msg}");
    // Overwriting the planted name replaces the link; the outside file is untouched.
    fs.write(&planted, "mine").expect("write");
    assert_eq!(
        std::fs::read_to_string(w.outside.join("secret.txt")).expect("outside"),
        "OUTSIDE"
    );
}

#[test]
fn a_fifo_or_a_device_is_refused_at_once() {
    let w = world();
    let fifo = w.root.join("pipe");
    mkfifo(&fifo);
    let fs = SessionFs::new(&w.root).expect("root");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = fs.clone();
    let asked = fifo.clone();
    std::thread::spawn(move || {
        let started = Instant::now();
        let got = reader.read(&asked, None, None);
        let _ = tx.send((got.map_err(|e| e.to_string()), started.elapsed()));
    });
    let outcome = rx.recv_timeout(Duration::from_secs(3));
    if outcome.is_err() {
        // Unblock the hung reader (old code) so the test process can finish.
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
    }
    let (got, took) = outcome.expect("a FIFO read must return at once, not block");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    let msg = got.expect_err("a FIFO is not a regular file");
    assert!(
        msg.contains("pipe") && msg.contains("regular file"),
        "{msg}"
    );

    std::os::unix::fs::symlink("/dev/zero", w.root.join("zero")).expect("symlink");
    assert!(fs.read(&w.root.join("zero"), None, None).is_err());
    std::fs::create_dir(w.root.join("adir")).expect("mkdir");
    assert!(fs.read(&w.root.join("adir"), None, None).is_err());
}

#[test]
fn round_trip_inside_and_refusals_outside() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("session");
    std::fs::create_dir(&root).expect("mkdir");
    for fs in [
        SessionFs::new(&root).expect("root"),
        SessionFs::new(&root).expect("root").walk_only(),
    ] {
        fs.write(&root.join("notes/a.txt"), "one\ntwo\nthree\n")
            .expect("write inside");
        assert_eq!(
            fs.read(&root.join("notes/a.txt"), None, None)
                .expect("read"),
            "one\ntwo\nthree\n"
        );
        assert_eq!(
            fs.read(&root.join("notes/a.txt"), Some(2), Some(1))
                .expect("slice"),
            "two\n"
        );
        assert_eq!(
            fs.read(&root.join("./notes/./a.txt"), None, None)
                .expect("dots"),
            "one\ntwo\nthree\n"
        );

        let outside = dir.path().join("secret.txt");
        std::fs::write(&outside, "s").expect("seed");
        assert!(matches!(
            fs.read(&outside, None, None),
            Err(FsError::Outside { .. })
        ));
        assert!(matches!(
            fs.write(&outside, "x"),
            Err(FsError::Outside { .. })
        ));
        assert!(matches!(
            fs.read(&root.join("../secret.txt"), None, None),
            Err(FsError::Outside { .. })
        ));
        let link = root.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&outside, &link).expect("symlink");
        assert!(matches!(
            fs.read(&link, None, None),
            Err(FsError::Refused { .. })
        ));
        assert!(matches!(fs.write(&link, "x"), Err(FsError::Refused { .. })));
        let up = root.join("up");
        let _ = std::fs::remove_file(&up);
        std::os::unix::fs::symlink(dir.path(), &up).expect("dir symlink");
        assert!(matches!(
            fs.write(&root.join("up/new.txt"), "x"),
            Err(FsError::Refused { .. })
        ));
        assert!(!dir.path().join("new.txt").exists());
        assert_eq!(std::fs::read_to_string(&outside).expect("untouched"), "s");
        assert!(matches!(
            fs.read(&root.join("missing"), None, None),
            Err(FsError::NotFound(_))
        ));
    }
}

/// Issue 27 item 11: ACP file paths are absolute; a relative one (which the
/// client used to resolve against the session dir) is refused for reads and
/// writes with -32602, naming the value and the rule, and nothing is written.
#[test]
fn a_relative_path_is_refused_naming_the_value_and_the_rule() {
    let w = world();
    for fs in [
        SessionFs::new(&w.root).expect("root"),
        SessionFs::new(&w.root).expect("root").walk_only(),
    ] {
        for asked in ["sub/secret.txt", "./sub/secret.txt", "fresh.txt"] {
            let read = fs.read(Path::new(asked), None, None);
            let write = fs.write(Path::new(asked), "x");
            for got in [read.map(drop), write] {
                let err = got.expect_err("a relative path is refused");
                assert!(matches!(err, FsError::Relative { .. }), "{asked}: {err:?}");
                assert_eq!(err.code(), -32602);
                let msg = err.to_string();
                assert!(
                    msg.contains(asked) && msg.contains("must be absolute"),
                    "{msg}"
                );
            }
        }
        assert!(!w.root.join("fresh.txt").exists());
        assert_eq!(
            std::fs::read_to_string(w.root.join("sub/secret.txt")).expect("untouched"),
            "INSIDE"
        );
    }
}
