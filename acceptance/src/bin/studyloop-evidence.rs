//! `studyloop-evidence`: checks evidence bundles.
//!
//! `studyloop-evidence verify <bundle>...` re-hashes every file of each bundle
//! against its `manifest.json` and lists every mismatched, missing and extra
//! file (names compared as bytes), every unexplained directory, every entry that
//! is not a regular file, every mode other than 0700/0600 and every hard link.
//! Files are opened non-blocking as regular files only, so a FIFO planted in a
//! bundle is reported, never waited on. Exit 0 only when every bundle is clean; 1 when any differs; 2 when a
//! bundle cannot be read at all (or the arguments are wrong).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use studyloop_acceptance::evidence::{self, VerifyReport};

#[derive(Debug, Parser)]
#[command(
    name = "studyloop-evidence",
    about = "Check StudyLoop evidence bundles"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Re-hash bundles and report every mismatched, missing and extra file.
    Verify {
        /// Bundle directories (each holding a manifest.json).
        #[arg(required = true)]
        bundles: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let Cli {
        command: Command::Verify { bundles },
    } = Cli::parse();
    let mut worst = 0u8;
    for bundle in &bundles {
        match evidence::verify(bundle) {
            Ok(report) if report.is_clean() => {
                println!(
                    "ok {}: {} file(s) match the manifest",
                    bundle.display(),
                    report.matched
                );
            }
            Ok(report) => {
                print_problems(bundle, &report);
                worst = worst.max(1);
            }
            Err(err) => {
                eprintln!("error {}: {err}", bundle.display());
                worst = 2;
            }
        }
    }
    ExitCode::from(worst)
}

fn print_problems(bundle: &std::path::Path, report: &VerifyReport) {
    println!(
        "FAILED {}: {} mismatched, {} missing, {} extra, {} unexpected dir(s), {} irregular, {} wrong mode(s), {} hard link(s) ({} matched)",
        bundle.display(),
        report.mismatched.len(),
        report.missing.len(),
        report.extra.len(),
        report.unexpected_dirs.len(),
        report.irregular.len(),
        report.wrong_modes.len(),
        report.hard_links.len(),
        report.matched
    );
    for m in &report.mismatched {
        println!(
            "  mismatch {}: manifest {} but file is {}",
            m.path, m.expected, m.actual
        );
    }
    for (word, list) in [
        ("missing ", &report.missing),
        ("extra   ", &report.extra),
        ("dir     ", &report.unexpected_dirs),
        ("irregular", &report.irregular),
        ("mode    ", &report.wrong_modes),
        ("link    ", &report.hard_links),
    ] {
        for item in list {
            println!("  {word} {item}");
        }
    }
}
