//! The `studyloop` command-line entry point: parse, run, map errors to a
//! one-line message and an exit code (2 = scope gate or usage, 1 = other errors).
//! Under `--json` a failure is also the envelope's `{"error": …}` on stdout
//! (docs/using-studyloop.md "The JSON envelope"), so a script reads one object.

use std::process::ExitCode;

use clap::Parser as _;
use studyloop::envelope::{Code, Failure};

fn main() -> ExitCode {
    // `studyloop contain -- ARGV` forks into namespaces: before anything
    // starts a thread or reads a config (docs/security-hardening.md).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = studyloop::modules::contain_dispatch(&args) {
        return ExitCode::from(code);
    }
    let cli = match studyloop::cli::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are not failures; a usage error asked for JSON is.
            if e.use_stderr() && args.iter().any(|a| a == "--json") {
                let text = e.to_string();
                let line = text.lines().next().unwrap_or_default();
                let line = line.strip_prefix("error: ").unwrap_or(line);
                print_failure(&Failure::new(Code::InvalidInput, line));
            }
            e.exit();
        }
    };
    let json = cli.wants_json();
    let fail = |failure: Failure, code: u8| {
        if json {
            print_failure(&failure);
        }
        // Errors quote topics and state values: print them inert.
        eprintln!(
            "studyloop: error: {}",
            studyloop::term::text(&failure.message)
        );
        ExitCode::from(code)
    };
    let ctx = match studyloop::context::Ctx::from_process() {
        Ok(c) => c,
        Err(e) => {
            return fail(
                Failure::new(
                    Code::Internal,
                    format!("cannot determine the working directory or executable: {e}"),
                ),
                1,
            );
        }
    };
    // The clock is fixed once, from the same snapshot every operation reads.
    if let Err(e) = studyloop::clock::install(&ctx.env) {
        return fail(Failure::new(Code::InvalidInput, e.to_string()), 1);
    }
    match studyloop::cli::run(cli, &ctx) {
        Ok(code) => ExitCode::from(code),
        Err(e) => fail(e.failure(), e.exit_code()),
    }
}

/// The failure envelope on stdout: JSON escapes every control character, so the
/// object is inert on a terminal as it is.
fn print_failure(failure: &Failure) {
    println!("{:#}", failure.to_json());
}
