//! `studyloop-stub-acp`: a scripted ACP agent (a test double) speaking NDJSON
//! JSON-RPC 2.0 on stdin/stdout, configured only by `STUB_ACP_*` variables.

use std::process::ExitCode;

use studyloop_stubs::acp::{self, KNOBS, Knobs};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {}
        Some("-h" | "--help") => {
            print_help();
            return ExitCode::SUCCESS;
        }
        Some("-V" | "--version") => {
            println!(
                "studyloop-stub-acp {} (test double)",
                env!("CARGO_PKG_VERSION")
            );
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!(
                "studyloop-stub-acp: unknown argument {other:?}; it takes none (only --help, \
                 --version); configure it with STUB_ACP_* variables, see --help"
            );
            return ExitCode::from(2);
        }
    }
    let knobs = match Knobs::from_lookup(|name| std::env::var(name).ok()) {
        Ok(knobs) => knobs,
        Err(err) => {
            eprintln!("studyloop-stub-acp: {err}");
            return ExitCode::from(2);
        }
    };
    let code = acp::run(&knobs, std::io::stdin(), std::io::stdout().lock());
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn print_help() {
    println!(
        "studyloop-stub-acp: a scripted ACP agent for hermetic tests (a TEST DOUBLE; it never \
         calls a model)\n\nSpeaks newline-delimited JSON-RPC 2.0 on stdin/stdout: initialize, \
         session/new, session/prompt, session/cancel; other methods get -32601. With no \
         prompt script it echoes each prompt as `STUB-ACP-ECHO <n>: <text>`.\n\nKnobs:"
    );
    for (name, meaning) in KNOBS {
        println!("  {name:<34} {meaning}");
    }
}
