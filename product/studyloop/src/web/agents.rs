//! How each harness speaks ACP (web only): the adapter argv, the extra
//! environment it needs, and the install hint for a missing binary.
//!
//! kiro has ACP built in (`kiro-cli acp --agent studyloop`); codex and claude
//! go through the pinned Zed adapters, pi through `pi-acp`, opencode through its
//! own `acp` mode (`--pure` keeps it off the network). grok has no ACP path
//! here, so an ACP start with grok is refused, not attempted.

use crate::adapters::{HARNESS_ORDER, Harness};
use crate::env::Env;

/// One harness's ACP launch.
#[derive(Debug, Clone, Copy)]
pub struct AcpLaunch {
    /// argv; `argv[0]` is looked up on the child's PATH.
    pub argv: &'static [&'static str],
    /// The npm package (or product) that provides `argv[0]`.
    pub package: &'static str,
}

/// The ACP launch of `harness`, or `None` when it has no ACP path.
#[must_use]
pub fn acp_launch(harness: Harness) -> Option<AcpLaunch> {
    let (argv, package): (&'static [&'static str], _) = match harness {
        Harness::Kiro => (
            &["kiro-cli", "acp", "--agent", "studyloop"],
            "kiro-cli (Kiro)",
        ),
        Harness::Codex => (&["codex-acp"], "@zed-industries/codex-acp"),
        Harness::Claude => (&["claude-code-acp"], "@zed-industries/claude-code-acp"),
        Harness::Pi => (&["pi-acp"], "pi-acp"),
        Harness::Opencode => (&["opencode", "acp", "--pure"], "opencode-linux-x64"),
        Harness::Grok => return None,
    };
    Some(AcpLaunch { argv, package })
}

/// The harnesses that can start over ACP, comma separated (for error text).
#[must_use]
pub fn acp_capable() -> Vec<&'static str> {
    HARNESS_ORDER
        .into_iter()
        .filter(|h| acp_launch(*h).is_some())
        .map(Harness::as_str)
        .collect()
}

/// Variables an adapter needs on top of the scrubbed environment.
#[must_use]
pub fn acp_extra_env(harness: Harness, env: &Env) -> Vec<(String, String)> {
    let mut extra = Vec::new();
    match harness {
        // Claude Code refuses its permission-bypass mode as root unless told it
        // runs in a sandbox; CI and the lab run as root.
        Harness::Claude if rustix::process::geteuid().is_root() => {
            extra.push(("IS_SANDBOX".into(), "1".into()));
        }
        // pi-acp spawns `pi`; point it at the harness binary this env resolves.
        Harness::Pi => {
            if let Some(pi) = Harness::Pi.adapter().resolve_binary(env) {
                extra.push((
                    "PI_ACP_PI_COMMAND".into(),
                    pi.to_string_lossy().into_owned(),
                ));
            }
        }
        _ => {}
    }
    extra
}

/// The install hint for a missing ACP binary.
#[must_use]
pub fn install_hint(launch: &AcpLaunch) -> String {
    format!(
        "install {} (for this repo: `just harnesses`, then put .harnesses/node_modules/.bin on PATH)",
        launch.package
    )
}
