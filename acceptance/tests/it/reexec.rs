//! Running one test of this binary again in a child process, for the tests that
//! need a process of their own (a SIGKILLed owner, a signal handler, `setpriv` or
//! `prlimit` around the body). nextest already gives every test a process, but
//! `cargo test` runs them as threads of one binary, so these re-execute either way.

use std::process::{Command, Output};

/// The name libtest knows `test` by: its module path without the crate (`it::`),
/// so `libtest_name(module_path!(), "t")` in `tests/it/sweep.rs` is `sweep::t`.
pub(crate) fn libtest_name(module_path: &str, test: &str) -> String {
    let module = module_path.split_once("::").map_or("", |(_, m)| m);
    if module.is_empty() {
        test.to_owned()
    } else {
        format!("{module}::{test}")
    }
}

/// Runs exactly the test `name` (a [`libtest_name`]) of this binary, alone, with
/// `child_var=1`, and returns its output after checking that it ran and passed
/// (a filter matching nothing would otherwise "pass" with 0 tests).
pub(crate) fn run_alone(name: &str, child_var: &str) -> Output {
    let out = Command::new(std::env::current_exe().expect("test executable path"))
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(child_var, "1")
        .output()
        .expect("re-run this test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the child run of {name} did not pass exactly one test: status {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
