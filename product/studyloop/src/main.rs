//! The `studyloop` command-line entry point.

fn main() -> std::process::ExitCode {
    eprintln!("studyloop: the CLI is being built (see issue 3)");
    std::process::ExitCode::from(1)
}
