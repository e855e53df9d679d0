//! `studyloop-evidence`: checks evidence bundles.
//!
//! `studyloop-evidence verify <bundle>...` re-hashes every file of each bundle
//! against its `manifest.json` and lists every mismatched, missing and extra
//! file (names compared as bytes), every unexplained directory, every entry that
//! is not a regular file, every mode other than 0700/0600 and every hard link.
//! Files are opened non-blocking as regular files only, so a FIFO planted in a
//! bundle is reported, never waited on. Exit 0 only when every bundle is clean; 1 when any differs; 2 when a
//! bundle cannot be read at all (or the arguments are wrong).
//!
//! `studyloop-evidence verify --run <run-dir>` does the same for every bundle the run's
//! results lines name, and also compares each manifest's sha256 with the one its line
//! recorded when the bundle was sealed: the inventory does not cover the manifest, so
//! this is what catches a manifest edited afterwards. A line naming a bundle without a
//! recorded digest is a failure, never a pass.

use std::path::{Path, PathBuf};
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
        #[arg(required_unless_present = "run")]
        bundles: Vec<PathBuf>,
        /// Run directories: verify every bundle their results lines name, and its
        /// manifest against the sha256 the line recorded.
        #[arg(long)]
        run: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let Cli {
        command: Command::Verify { bundles, run },
    } = Cli::parse();
    let mut worst = 0u8;
    let mut checks: Vec<(PathBuf, Option<Recorded>)> =
        bundles.into_iter().map(|b| (b, None)).collect();
    for dir in &run {
        match recorded_bundles(dir) {
            Ok(found) => checks.extend(found.into_iter().map(|(b, r)| (b, Some(r)))),
            Err(err) => {
                eprintln!("error {}: {err}", dir.display());
                worst = 2;
            }
        }
    }
    for (bundle, recorded) in &checks {
        if let Some(recorded) = recorded {
            match digest_problem(bundle, recorded) {
                Ok(None) => {}
                Ok(Some(problem)) => {
                    println!("FAILED {}: {problem}", bundle.display());
                    worst = worst.max(1);
                }
                Err(err) => {
                    eprintln!("error {}: {err}", bundle.display());
                    worst = 2;
                    continue;
                }
            }
        }
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

/// What a results line recorded about the bundle it names.
struct Recorded {
    /// Where the line is (`results.jsonl:N`).
    origin: String,
    /// The manifest digest it recorded, if any.
    digest: Option<String>,
}

/// Every bundle a results line of `dir` names (relative paths taken from `dir`), with
/// the digest that line recorded.
fn recorded_bundles(
    dir: &Path,
) -> Result<Vec<(PathBuf, Recorded)>, studyloop_acceptance::ledger::LedgerError> {
    let records = studyloop_acceptance::ledger::RunRecords::read(dir)?;
    let mut out = Vec::new();
    for status in records.trials().values() {
        for line in &status.records {
            if let Some(b) = &line.bundle {
                let recorded = Recorded {
                    origin: line.origin.to_string(),
                    digest: line.manifest_sha256.clone(),
                };
                out.push((line.dir.join(b), recorded));
            }
        }
    }
    Ok(out)
}

/// Why `bundle`'s manifest disagrees with what its line recorded; `None` = agrees.
fn digest_problem(
    bundle: &Path,
    recorded: &Recorded,
) -> Result<Option<String>, evidence::VerifyError> {
    let (bytes, _) = evidence::read_manifest(bundle)?;
    let now = evidence::manifest_sha256(&bytes);
    Ok(match &recorded.digest {
        None => Some(format!(
            "{} names this bundle but records no manifest_sha256: nothing recorded at run time vouches for the manifest (run the cell again with this runner)",
            recorded.origin
        )),
        Some(d) if *d != now => Some(format!(
            "manifest is {now} but {} recorded manifest_sha256 {d}: the manifest was edited after its run",
            recorded.origin
        )),
        Some(_) => None,
    })
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
