//! `studyloop-mcp`: StudyLoop's MCP server over stdio (or, with `--http`,
//! Streamable HTTP on loopback: see `http`), on the official Rust
//! SDK (`rmcp`). It exposes the nine study-plan tools in the reference order
//! plus `record_plan_learning`, `log_topic`, `end_session` and
//! `session_search` (see `tools`), all through the product's own layers, so
//! the MCP door behaves like `studyloop plan …` and `/api/plans…`. Harness
//! configs register it under the name `studyloop`.
//!
//! The environment is read once at start (paths, scope), like `studyloop`.

mod edge;
mod framing;
mod http;
mod outputs;
mod refusal;
mod schema;
mod server;
mod session_tools;
mod tools;

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args()
        .nth(1)
        .is_some_and(|a| a == "--version" || a == "-V")
    {
        println!("studyloop-mcp {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    // `--http IP:PORT`: Streamable HTTP on loopback instead of stdio.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http_addr = match args.iter().position(|a| a == "--http") {
        None => None,
        Some(i) => match args.get(i + 1).map(|v| http::parse_addr(v)) {
            Some(Ok(addr)) => Some(addr),
            Some(Err(e)) => {
                eprintln!("studyloop-mcp: error: {e}");
                return ExitCode::from(2);
            }
            None => {
                eprintln!("studyloop-mcp: error: --http needs an address, e.g. --http 127.0.0.1:0");
                return ExitCode::from(2);
            }
        },
    };
    let ctx = match studyloop::context::Ctx::from_process() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "studyloop-mcp: error: cannot determine the working directory or executable: {e}"
            );
            return ExitCode::from(1);
        }
    };
    // The same clock as `studyloop` (topics logged through a tool carry its time).
    if let Err(e) = studyloop::clock::install(&ctx.env) {
        eprintln!("studyloop-mcp: error: {e}");
        return ExitCode::from(1);
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("studyloop-mcp: error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let served = match http_addr {
        Some(addr) => rt.block_on(http::serve_http(ctx, addr)),
        None => rt.block_on(server::serve_stdio(ctx)),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("studyloop-mcp: error: {e}");
            ExitCode::from(1)
        }
    }
}
