//! The `studyloop` command-line entry point: parse, run, map errors to a
//! one-line message and an exit code (2 = scope gate, 1 = other errors).

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // `studyloop contain -- ARGV` forks into namespaces: before anything
    // starts a thread or reads a config (docs/security-hardening.md).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = studyloop::modules::contain_dispatch(&args) {
        return ExitCode::from(code);
    }
    let cli = studyloop::cli::Cli::parse();
    let ctx = match studyloop::context::Ctx::from_process() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "studyloop: error: cannot determine the working directory or executable: {e}"
            );
            return ExitCode::from(1);
        }
    };
    // The clock is fixed once, from the same snapshot every operation reads.
    if let Err(e) = studyloop::clock::install(&ctx.env) {
        eprintln!(
            "studyloop: error: {}",
            studyloop::term::text(&e.to_string())
        );
        return ExitCode::from(1);
    }
    match studyloop::cli::run(cli, &ctx) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // Errors quote topics and state values: print them inert.
            eprintln!(
                "studyloop: error: {}",
                studyloop::term::text(&e.to_string())
            );
            ExitCode::from(e.exit_code())
        }
    }
}
