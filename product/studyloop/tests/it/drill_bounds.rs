//! A module whose check prints 1 GB, through the real CLI on a terminal: the
//! phase ends (the runner drains what it does not keep), the CLI keeps the
//! first 64 KiB and says so, and its memory stays bounded — it runs under
//! `RLIMIT_DATA` 256 MiB, which a CLI storing the gigabyte would exceed.

use crate::commands::drill_on_a_tty_as;
use crate::common::World;

#[test]
fn a_gigabyte_of_output_is_capped_reported_and_never_held() {
    let w = World::bare();
    assert_eq!(w.run(&["module", "new", "loud"]).code, 0);
    std::fs::write(
        w.home.path().join("loud/scripts/check.sh"),
        "#!/bin/sh\nhead -c 1073741824 /dev/zero | tr '\\0' x\necho\necho done-printing\nexit 1\n",
    )
    .unwrap();
    assert_eq!(w.run(&["module", "add", "loud"]).code, 0);
    let started = std::time::Instant::now();
    let out = drill_on_a_tty_as(&w, "prlimit --data=268435456 -- ", "loud", "check", "yes\n");
    let took = started.elapsed();
    assert_eq!(
        out.code,
        1,
        "{}\n{}",
        out.stderr,
        &out.stdout[..out.stdout.len().min(2000)]
    );
    assert!(
        out.stdout.contains("| … (output capped at 65536 bytes)")
            && out.stdout.contains("check: failed (exit 1)"),
        "{}",
        &out.stdout[out.stdout.len().saturating_sub(2000)..]
    );
    // Only the first 64 KiB are kept: the line after the gigabyte is not.
    assert!(!out.stdout.contains("done-printing"));
    assert!(
        out.stdout.len() < 200 * 1024,
        "{} bytes shown",
        out.stdout.len()
    );
    eprintln!("1 GB of check output: capped and reported in {took:.1?}");
}
