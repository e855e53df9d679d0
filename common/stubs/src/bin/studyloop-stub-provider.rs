//! `studyloop-stub-provider`: the deterministic local model server (a stub for a
//! paid model). Flags map one-to-one onto `studyloop_stubs::provider::ProviderConfig`;
//! everything else lives in the library.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use studyloop_stubs::provider::{
    FailStatus, Faults, ProviderConfig, ProviderError, ReplyMode, run,
};
use studyloop_stubs::{Role, RolesScript, ToolScript};

/// A deterministic local model server speaking OpenAI Chat Completions, OpenAI
/// Responses and Anthropic Messages on 127.0.0.1 (a stub: no model behind it).
#[derive(Debug, Parser)]
#[command(name = "studyloop-stub-provider", version)]
struct Args {
    /// Port on 127.0.0.1 (0 = a free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Write the bound port here (atomically, "<port>\n").
    #[arg(long, value_name = "FILE")]
    port_file: Option<PathBuf>,
    /// Append one JSON line per request here (0600).
    #[arg(long, value_name = "FILE.jsonl")]
    log: Option<PathBuf>,
    /// Run seed for the reply nonce: sha256("<seed>:<n>")[..8 hex].
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Mentor reply shape: `echo` (one MENTOR-REPLY line; unit tests) or
    /// `realistic` (5–40 lines of Markdown behind that marker; lanes, journeys).
    #[arg(long, default_value = "echo", value_parser = parse_replies)]
    replies: ReplyMode,
    /// Roles script with canned replies: {"version":1,"mentor":[..],"learner":[..],"judge":[..]}.
    #[arg(long, value_name = "roles.json")]
    script: Option<PathBuf>,
    /// Which role to play (learner and judge need --script).
    #[arg(long, default_value = "mentor", value_parser = parse_role)]
    role: Role,
    /// Pause between streamed SSE events, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Require this key (Authorization: Bearer, or x-api-key on Anthropic paths).
    #[arg(long)]
    api_key: Option<String>,
    /// Report no usage in any response (an unobservable-usage backend).
    #[arg(long)]
    omit_usage: bool,
    /// Answer model requests with this status (401, 429 or 500) and the vendor's error body.
    #[arg(long)]
    fail_status: Option<u16>,
    /// Healthy model requests before any injected fault starts.
    #[arg(long, default_value_t = 0)]
    fail_after: u64,
    /// Stall model requests this many milliseconds before answering.
    #[arg(long)]
    stall_ms: Option<u64>,
    /// Cut responses after this many SSE events (or body bytes when not streaming).
    #[arg(long)]
    truncate_after: Option<u64>,
    /// While this file exists, its one line (`429`, `500`, `stall <ms>`, `truncate <n>`)
    /// is each model request's fault instead of the flags' (switch faults mid-conversation).
    #[arg(long, value_name = "FILE")]
    fault_file: Option<PathBuf>,
    /// Scripted tool calls: a JSON array of {"trigger", "tool" (name suffix),
    /// "arguments"}; see the `studyloop_stubs::tool_script` docs.
    #[arg(long, value_name = "tools.json")]
    tool_script: Option<PathBuf>,
}

fn parse_role(value: &str) -> Result<Role, String> {
    value.parse()
}

fn parse_replies(value: &str) -> Result<ReplyMode, String> {
    value.parse().map_err(|e: ProviderError| e.to_string())
}

fn config(args: Args) -> Result<ProviderConfig, ProviderError> {
    let script = args
        .script
        .as_deref()
        .map(RolesScript::load)
        .transpose()
        .map_err(|e| ProviderError::Config(e.to_string()))?;
    let tools = args
        .tool_script
        .as_deref()
        .map(ToolScript::load)
        .transpose()
        .map_err(|e| ProviderError::Config(e.to_string()))?;
    Ok(ProviderConfig {
        port: args.port,
        port_file: args.port_file,
        log: args.log,
        seed: args.seed,
        replies: args.replies,
        script,
        role: args.role,
        delay: Duration::from_millis(args.delay_ms),
        api_key: args.api_key,
        omit_usage: args.omit_usage,
        faults: Faults {
            fail_status: args.fail_status.map(FailStatus::from_code).transpose()?,
            fail_after: args.fail_after,
            stall: args.stall_ms.map(Duration::from_millis),
            truncate_after: args.truncate_after,
            fault_file: args.fault_file,
        },
        tools,
    })
}

fn main() -> ExitCode {
    studyloop_stubs::spawn::exit_when_orphaned();
    let args = Args::parse();
    match config(args).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("studyloop-stub-provider: {err}");
            ExitCode::FAILURE
        }
    }
}
