//! The rows of the harness table, one per harness in `HARNESS_ORDER`: the
//! measured values (markers, keys, timings) for the pinned versions.

use std::time::Duration;

use super::reply_source::{self, ReplySource, StoreFormat};
use super::stub_config;
use super::{AcpSurface, HarnessSpec, Install, McpSupport, ProbeKind, Resume, ScreenMarkers};
use crate::pane::{Key, PasteMode};
use crate::selection::HarnessName;

const KIRO_FIX: &str =
    "install the AWS Kiro CLI from its vendor download, sign in, and put kiro-cli on PATH";

/// The table, in `HARNESS_ORDER`.
pub const SPECS: [HarnessSpec; 6] = [
    HarnessSpec {
        name: HarnessName::Codex,
        install: Install::Pinned {
            package: "@openai/codex",
            version: "0.171.0",
        },
        markers: Some(ScreenMarkers {
            ready: "Ask Codex to do anything",
            idle: "Ask Codex to do anything",
            busy: "esc to interrupt",
        }),
        exit_keys: &[Key::Text("/quit"), Key::Named("Enter")],
        paste: PasteMode::Bracketed,
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["codex-acp"],
            adapter: Some("@zed-industries/codex-acp@0.16.0"),
        }),
        mcp: McpSupport::Supported,
        reply_source: ReplySource::Store(StoreFormat::CodexRollout),
        probe: ProbeKind::Authenticated {
            args: &["exec", "--skip-git-repo-check", "--ephemeral"],
            prompt: true,
            cost: "measured 1.8 s against the stub with 5 lanes running (load ~8 on 2 cores); --ephemeral: no session files",
        },
        stub_config: Some(stub_config::codex),
        ready_timeout: Duration::from_secs(60),
        turn_timeout: Duration::from_secs(90),
        ready_quiet: Duration::from_millis(300),
    },
    HarnessSpec {
        name: HarnessName::Claude,
        install: Install::Pinned {
            package: "@anthropic-ai/claude-code",
            version: "2.1.332",
        },
        markers: Some(ScreenMarkers {
            ready: r"shift\+tab to cycle|\? for shortcuts",
            idle: r"shift\+tab to cycle|\? for shortcuts",
            busy: "esc to interrupt",
        }),
        exit_keys: &[Key::Text("/exit"), Key::Named("Enter")],
        // 2.1.332 wraps a bracketed paste as `<pasted_content id=…>` (measured
        // against the stub): typed lines with its C-j newline arrive as the
        // learner's own text.
        paste: PasteMode::Lines { newline: "C-j" },
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["claude-code-acp"],
            adapter: Some("@zed-industries/claude-code-acp@0.16.2"),
        }),
        mcp: McpSupport::Supported,
        reply_source: ReplySource::Store(StoreFormat::ClaudeProjects),
        probe: ProbeKind::Authenticated {
            args: &["-p", "--no-session-persistence"],
            prompt: true,
            cost: "measured 2.1 s against the stub under the same load; --no-session-persistence: nothing saved",
        },
        stub_config: Some(stub_config::claude),
        ready_timeout: Duration::from_secs(60),
        turn_timeout: Duration::from_secs(90),
        ready_quiet: Duration::from_millis(300),
    },
    HarnessSpec {
        name: HarnessName::Kiro,
        install: Install::NotInstallable {
            reason: "kiro-cli is not on any reachable registry (npm kiro-cli/@kiro/cli/@aws/kiro-cli are 404; PyPI and crates.io `kiro` are unrelated projects)",
            fix: KIRO_FIX,
        },
        markers: None,
        exit_keys: &[],
        paste: PasteMode::Bracketed,
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["kiro-cli", "acp"],
            adapter: None,
        }),
        mcp: McpSupport::Supported,
        reply_source: ReplySource::Screen(&reply_source::UNMEASURED),
        probe: ProbeKind::Authenticated {
            args: &["whoami"],
            prompt: false,
            cost: "no model call",
        },
        stub_config: None,
        ready_timeout: Duration::from_secs(60),
        turn_timeout: Duration::from_secs(90),
        ready_quiet: Duration::from_millis(300),
    },
    HarnessSpec {
        name: HarnessName::Pi,
        install: Install::Pinned {
            package: "@mariozechner/pi-coding-agent",
            version: "0.73.1",
        },
        markers: Some(ScreenMarkers {
            ready: r"%/\d+(\.\d+)?[kM]",
            idle: r"%/\d+(\.\d+)?[kM]",
            busy: r"Working\.\.\.",
        }),
        exit_keys: &[Key::Named("C-d")],
        paste: PasteMode::Bracketed,
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["pi-acp"],
            adapter: Some("pi-acp@0.0.24"),
        }),
        mcp: McpSupport::Unsupported {
            reason: "pi 0.73.1 has no MCP client (its README: \"No MCP\"); the product records it as not registrable",
        },
        reply_source: ReplySource::Store(StoreFormat::PiSessions),
        probe: ProbeKind::Authenticated {
            args: &["--no-session", "-p"],
            prompt: true,
            cost: "measured 7.3 s against the stub under the same load; --no-session: nothing saved",
        },
        stub_config: Some(stub_config::pi),
        ready_timeout: Duration::from_secs(60),
        turn_timeout: Duration::from_secs(90),
        ready_quiet: Duration::from_millis(300),
    },
    HarnessSpec {
        name: HarnessName::Opencode,
        install: Install::Pinned {
            package: "opencode-linux-x64",
            version: "1.18.33",
        },
        markers: Some(ScreenMarkers {
            // The footer wraps in the product's narrower main pane, so the
            // idle test is "footer shown, no busy marker".
            ready: r"Ask anything|OpenCode \d+\.\d+",
            idle: r"OpenCode \d+\.\d+",
            busy: "esc interrupt",
        }),
        exit_keys: &[Key::Named("C-c")],
        paste: PasteMode::Bracketed,
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["opencode", "acp"],
            adapter: None,
        }),
        mcp: McpSupport::Supported,
        reply_source: ReplySource::Store(StoreFormat::OpencodeDb),
        probe: ProbeKind::Authenticated {
            args: &["run"],
            prompt: true,
            cost: "measured 20 s against the stub under the same load (CPU-bound start); writes a throwaway session under scratch/probe, never in the lane's dir",
        },
        stub_config: Some(stub_config::opencode),
        ready_timeout: Duration::from_secs(120),
        turn_timeout: Duration::from_secs(120),
        ready_quiet: Duration::from_millis(300),
    },
    HarnessSpec {
        name: HarnessName::Grok,
        install: Install::Pinned {
            package: "@vibe-kit/grok-cli",
            version: "0.0.34",
        },
        markers: Some(ScreenMarkers {
            ready: "Ask me anything",
            idle: "Ask me anything",
            busy: "esc to interrupt",
        }),
        exit_keys: &[Key::Text("exit"), Key::Named("Enter")],
        // 0.0.34 (Ink) inserts a pasted chunk verbatim: a CR would reach the
        // model as a CR (measured), so newlines go as LF.
        paste: PasteMode::BracketedLf,
        resume: Resume::Unsupported {
            finding: "grok 0.0.34 keeps history only in memory: no sessions, no --continue; `study --resume` relaunches it fresh, so the stub counts turn 1 again",
        },
        acp: None,
        mcp: McpSupport::Supported,
        reply_source: ReplySource::Screen(&reply_source::GROK),
        probe: ProbeKind::Authenticated {
            args: &["-p"],
            prompt: true,
            cost: "measured 6.1 s against the stub under the same load (a non-streaming request); grok keeps no sessions",
        },
        stub_config: Some(stub_config::grok),
        ready_timeout: Duration::from_secs(60),
        turn_timeout: Duration::from_secs(90),
        ready_quiet: Duration::from_millis(1500),
    },
];

/// The row for `name`.
pub fn spec(name: HarnessName) -> &'static HarnessSpec {
    SPECS
        .iter()
        .find(|s| s.name == name)
        .expect("SPECS has a row per HarnessName (unit-tested)")
}
