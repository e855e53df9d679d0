//! Issue 34 §3: the sentinel check applies to the root the sweep deletes. A target
//! whose home leaves its root (`home=<root>/../<other world>/home`) borrowed the
//! other world's sentinel, so a root holding no sentinel at all was swept. Such a
//! target must be refused and the tree left. Run as root and as a non-root user.

use studyloop_acceptance::scratch::{SENTINEL_NAME, Scratch};
use studyloop_acceptance::sweep::{SweepError, SweepTarget, sweep};

#[test]
fn a_home_that_leaves_its_root_cannot_lend_another_world_s_sentinel() {
    let victim = Scratch::create().unwrap();
    let other = Scratch::create().unwrap();
    // The victim root holds no sentinel of its own (kept aside to restore below).
    let own = std::fs::read(victim.sentinel_path()).unwrap();
    std::fs::remove_file(victim.sentinel_path()).unwrap();
    let token = std::fs::read_to_string(other.sentinel_path()).unwrap();
    let other_name = other.root().file_name().unwrap();
    let home = victim.root().join("..").join(other_name).join("home");
    let real_home = tempfile::tempdir().unwrap();
    let target = SweepTarget {
        root: victim.root(),
        home: &home,
        config_dir: victim.config_dir(),
        sentinel_name: SENTINEL_NAME,
        sentinel_token: token.trim(),
    };
    let err = sweep(&target, real_home.path()).unwrap_err();
    assert!(
        matches!(err, SweepError::SentinelMissing { .. }),
        "expected a missing-sentinel refusal, got {err}"
    );
    assert!(
        victim.config_dir().is_dir(),
        "the victim root was swept without a sentinel of its own"
    );
    assert!(other.sentinel_path().is_file());
    // Put the victim's sentinel back so its own close sweeps it.
    std::fs::write(victim.sentinel_path(), own).unwrap();
    victim.close().unwrap();
    other.close().unwrap();
}
