//! `studyloop-clean-scratch` (`just clean-scratch`): stops and sweeps every
//! scratch world (`/tmp/sl-acc-*`) whose runner died without sweeping it
//! (SIGKILL, a crash, a power cut), with the same guards as a normal close.
//! Worlds of live runners, worlds without an owner record and other users'
//! worlds are never touched; each is listed with the reason. Every runner
//! does the same before its trials. Exit 0 when nothing failed; 1 when an
//! orphaned world could not be swept (the message names the guard or error).

use std::process::ExitCode;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::scratch::{describe_reap, reap_orphans};

fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        eprintln!("usage: studyloop-clean-scratch (it takes no arguments)");
        return ExitCode::from(2);
    }
    let report = reap_orphans(&CallerEnv::capture());
    for line in describe_reap(&report, true) {
        println!("{line}");
    }
    println!(
        "clean-scratch: {} swept, {} left, {} failed",
        report.reaped.len(),
        report.left.len(),
        report.failed.len()
    );
    if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
