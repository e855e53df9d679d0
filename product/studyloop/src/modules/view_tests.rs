//! The phase's view when root runs it as uid 65534: the attempt and the
//! snapshot under a private (0700) directory that is not hidden anyway —
//! a config dir outside the home, /tmp and /run — are still reached, because
//! every directory 65534 may not pass is hidden behind a tmpfs and the paths
//! the phase needs are bound back inside; what else that directory holds
//! stays out of sight. For any other user the same run is their own.

use std::os::unix::fs::PermissionsExt as _;

use super::contain_tests::visible_scratch;
use super::runner;
use super::runner_tests::plan_for;

#[test]
fn a_private_directory_on_the_way_is_passed_and_stays_private() {
    let private = tempfile::tempdir_in(visible_scratch()).unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let secret = private.path().join("secret");
    std::fs::write(&secret, "s3cret\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dir = private.path().join("config");
    std::fs::create_dir(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"uid=$(id -u)\"\necho w > w && echo wrote-work\ncat {} 2>/dev/null && echo SAW-SECRET\nls {} 2>/dev/null | grep -q secret && echo LISTED-SECRET\nexit 0\n",
        secret.display(),
        private.path().display()
    );
    let plan = plan_for(&dir, "setup", &script, 10);
    let a = runner::attempt(&dir, &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    assert_eq!(o.code, Some(0), "{}", o.output);
    let me = rustix::process::getuid().as_raw();
    let uid = if me == 0 {
        super::sandbox::UNPRIVILEGED
    } else {
        me
    };
    assert!(o.output.contains(&format!("uid={uid}\n")), "{}", o.output);
    assert!(o.output.contains("wrote-work"), "{}", o.output);
    assert!(!o.output.contains("SECRET"), "{}", o.output);
    // What the phase wrote is 65534's (root) or the user's own; the attempt
    // still closes.
    let owner =
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(a.dir.join("work/w")).unwrap());
    assert_eq!(owner, uid);
    runner::close(&a).unwrap();
}

/// An attempt whose `work` is a symlink to a directory outside (left by an
/// older StudyLoop, whose phases could write the attempt itself) is refused:
/// binding it by path would make its target writable.
#[test]
fn a_symlinked_attempt_directory_is_refused_not_bound() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let plan = plan_for(dir.path(), "check", "#!/bin/sh\necho x > planted\n", 10);
    let a = runner::attempt(dir.path(), &plan).unwrap();
    std::fs::remove_dir(a.dir.join("work")).unwrap();
    std::os::unix::fs::symlink(outside.path(), a.dir.join("work")).unwrap();
    let err = runner::run(&plan, &a).unwrap_err().to_string();
    assert!(err.contains("not a directory"), "{err}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// The phase cannot become root of a nested user namespace (where a fork
/// bomb would count under a fresh uid): its /proc is read-only, so no
/// nested namespace gets an id map.
#[test]
fn a_nested_user_namespace_gets_no_root() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_for(
        dir.path(),
        "check",
        "#!/bin/sh\nunshare -r id -u\necho \"rc=$?\"\n",
        10,
    );
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    eprint!("nested user namespace: {}", o.output);
    assert!(o.output.contains("rc=1"), "{}", o.output);
    assert!(!o.output.lines().any(|l| l == "0"), "{}", o.output);
}

/// Issue 25 item 3: a drill phase cannot read the console token (a world-readable
/// token in a session dir the phase could otherwise see is hidden, its siblings not).
#[test]
fn the_console_token_directory_is_hidden_from_the_phase() {
    let session = tempfile::tempdir_in(visible_scratch()).unwrap();
    std::fs::set_permissions(session.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let token = crate::ids::random_hex(32);
    let dir = crate::console_token::token_dir(session.path());
    std::fs::create_dir(&dir).unwrap();
    let file = crate::console_token::token_file(session.path(), 8567);
    std::fs::write(&file, &token).unwrap();
    // Readable to anyone, so only the hiding can keep it from the phase.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(session.path().join("sibling"), "visible\n").unwrap();
    std::fs::set_permissions(
        session.path().join("sibling"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let dir = session.path().join("config");
    std::fs::create_dir(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\ncat {} 2>/dev/null; echo\ncat {}/sibling\nexit 0\n",
        file.display(),
        session.path().display()
    );
    let mut plan = plan_for(&dir, "setup", &script, 10);
    plan.hidden = vec![crate::console_token::token_dir(session.path())];
    let a = runner::attempt(&dir, &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    eprintln!(
        "figure: token read by the phase: {}",
        o.output.contains(&token)
    );
    assert!(
        o.output.contains("visible"),
        "the sibling must stay in view: {}",
        o.output
    );
    assert!(!o.output.contains(&token), "{}", o.output);
}
