//! One row of the harness table ([`HarnessSpec`]) and the small types it is made of:
//! how the binary is installed, how it is reached over ACP, what its probe proves,
//! whether a session resumes, and its screen markers.

use std::time::Duration;

use super::reply_source::ReplySource;
use super::stub_config::{StubConfig, StubTarget};
use crate::pane::{Key, Limits, Markers, PasteMode};
use crate::selection::HarnessName;

/// How the binary gets onto this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// Pinned in `harnesses/package.json`, installed by `just harnesses`.
    Pinned {
        /// The npm package.
        package: &'static str,
        /// The exact version.
        version: &'static str,
    },
    /// No reachable registry carries it: every trial skips by name.
    NotInstallable {
        /// Why.
        reason: &'static str,
        /// What a developer can do.
        fix: &'static str,
    },
}

/// How a harness is reached over ACP by the product's web surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcpSurface {
    /// The argv the product spawns (binary first).
    pub argv: &'static [&'static str],
    /// The pinned adapter package, when the harness has no built-in ACP.
    pub adapter: Option<&'static str>,
}

/// Whether an availability probe proves the model path or only the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// A non-interactive one-shot prompt whose reply must come back: proves
    /// the harness is configured and authenticated for the model it would use.
    Authenticated {
        /// Arguments after the binary; the probe prompt is appended last
        /// unless `prompt` is false (kiro's `whoami`).
        args: &'static [&'static str],
        /// Whether the probe prompt is appended.
        prompt: bool,
        /// Rough cost per probe against the stub, measured here.
        cost: &'static str,
    },
    /// Only the binary's presence and `--version` are checked.
    PresenceOnly {
        /// Why no stronger probe exists.
        why: &'static str,
    },
}

impl ProbeKind {
    /// The word used in COVERAGE.md.
    pub fn label(self) -> &'static str {
        match self {
            ProbeKind::Authenticated { .. } => "authenticated",
            ProbeKind::PresenceOnly { .. } => "presence-only",
        }
    }
}

/// Whether a ended session can be resumed with its history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// It resumes; the product's resume argv carries the history.
    Supported,
    /// It cannot; the lane records this as the finding and relaunches fresh.
    Unsupported {
        /// The finding.
        finding: &'static str,
    },
}

/// Whether the pinned version can call the product's MCP server (the
/// `mcp::<harness>` lane); the product registers it in the harness's config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpSupport {
    /// It reads the registration and calls the server's tools.
    Supported,
    /// It cannot; the lane skips with this reason.
    Unsupported {
        /// Why.
        reason: &'static str,
    },
}

/// Screen markers as regex sources (compiled by [`HarnessSpec::markers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenMarkers {
    /// Shown once the harness accepts input (fresh start and after resume).
    pub ready: &'static str,
    /// Shown at the bottom whenever it waits for input.
    pub idle: &'static str,
    /// Shown at the bottom while it works.
    pub busy: &'static str,
}

/// One harness row.
#[derive(Debug, Clone, Copy)]
pub struct HarnessSpec {
    /// Which harness.
    pub name: HarnessName,
    /// How it is installed.
    pub install: Install,
    /// The CLI/tmux surface's markers; `None` when it cannot run here.
    pub markers: Option<ScreenMarkers>,
    /// Keys that exit the TUI cleanly.
    pub(crate) exit_keys: &'static [Key],
    /// How its TUI takes a multi-line turn (measured on the pinned version;
    /// the `cli-tmux::<harness>::paste` trial proves it live).
    pub paste: PasteMode,
    /// Resume support.
    pub resume: Resume,
    /// Whether it can call the product's MCP tools.
    pub mcp: McpSupport,
    /// The web-ACP surface, when the harness has one.
    pub acp: Option<AcpSurface>,
    /// Where the CLI surface's recorded mentor replies come from: the pinned
    /// version's session store, else its screen chrome (`crate::transcript`).
    pub(crate) reply_source: ReplySource,
    /// The availability probe.
    pub probe: ProbeKind,
    /// Writes its offline config for a stub provider.
    pub(crate) stub_config: Option<fn(&StubTarget) -> StubConfig>,
    /// Readiness and per-turn limits (opencode is CPU-bound on 2 cores).
    pub ready_timeout: Duration,
    /// Per-turn limit.
    pub turn_timeout: Duration,
    /// Quiet time after the ready marker before typing (see `Limits`).
    pub ready_quiet: Duration,
}

impl HarnessSpec {
    /// The compiled markers (the sources are checked by a unit test).
    pub fn markers(&self) -> Option<Markers> {
        let m = self.markers?;
        let re = |s: &str| regex::Regex::new(s).ok();
        Some(Markers {
            ready: re(m.ready)?,
            idle: re(m.idle),
            busy: re(m.busy),
        })
    }

    /// The pane-driver limits for this harness.
    pub fn limits(&self, max_turns: u32) -> Limits {
        Limits {
            ready_timeout: self.ready_timeout,
            turn_timeout: self.turn_timeout,
            ready_quiet: self.ready_quiet,
            max_turns,
            ..Limits::default()
        }
    }

    /// The surfaces this harness has, as evidence words (the web ACP lanes
    /// run over the socket and through the browser; `mcp` where its pinned
    /// version calls MCP tools).
    pub fn surfaces(&self) -> Vec<&'static str> {
        let mut s = vec!["cli-tmux"];
        if self.acp.is_some() {
            s.extend(["web-acp", "web-acp-browser"]);
        }
        if self.mcp == McpSupport::Supported {
            s.push("mcp");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness_spec::{SPECS, spec};
    use crate::selection::HARNESS_ORDER;

    #[test]
    fn one_row_per_harness_in_harness_order() {
        let names: Vec<HarnessName> = SPECS.iter().map(|s| s.name).collect();
        assert_eq!(names, HARNESS_ORDER.to_vec());
    }

    #[test]
    fn every_marker_compiles_and_installable_harnesses_have_markers_and_keys() {
        for s in &SPECS {
            match s.install {
                Install::Pinned { .. } => {
                    let m = s
                        .markers
                        .unwrap_or_else(|| panic!("{} has no markers", s.name));
                    for src in [m.ready, m.idle, m.busy] {
                        regex::Regex::new(src).unwrap_or_else(|e| panic!("{}: {src}: {e}", s.name));
                    }
                    assert!(s.markers().is_some());
                    assert!(!s.exit_keys.is_empty(), "{} has no exit keys", s.name);
                    assert!(s.stub_config.is_some(), "{} has no stub config", s.name);
                }
                Install::NotInstallable { reason, fix } => {
                    assert_eq!(s.name, HarnessName::Kiro);
                    assert!(!reason.is_empty() && !fix.is_empty());
                }
            }
        }
    }

    #[test]
    fn grok_alone_has_no_acp_and_no_resume() {
        for s in &SPECS {
            let grok = s.name == HarnessName::Grok;
            assert_eq!(s.acp.is_none(), grok, "{}", s.name);
            assert_eq!(
                matches!(s.resume, Resume::Unsupported { .. }),
                grok,
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn idle_markers_match_the_measured_idle_screens() {
        let screens = [
            (
                HarnessName::Codex,
                "› Ask Codex to do anything\n  stub-model default · /w\n",
            ),
            (
                HarnessName::Claude,
                "❯\n  ⏵⏵ auto mode on (shift+tab to cycle) · ← for agents\n",
            ),
            (
                HarnessName::Pi,
                "/w\n↑1.1k ↓27 0.3%/128k (auto)    stub-model\n",
            ),
            (
                HarnessName::Opencode,
                "  /w     1.6K (1%)  ctrl+p commands    • OpenCode 1.18.33\n",
            ),
            (
                HarnessName::Grok,
                "│ ❯ Ask me anything...  │\n⏸ auto-edit: off\n",
            ),
        ];
        for (name, screen) in screens {
            let m = spec(name).markers().unwrap();
            assert!(
                crate::pane::screen::is_idle(screen, m.idle.as_ref(), m.busy.as_ref()),
                "{name}"
            );
            assert!(m.ready.is_match(screen), "{name} ready");
        }
        let busy = "⬝⬝⬝⬝  esc interrupt     1.6K (1%)  ctrl+p commands    • OpenCode 1.18.33\n";
        let m = spec(HarnessName::Opencode).markers().unwrap();
        assert!(!crate::pane::screen::is_idle(
            busy,
            m.idle.as_ref(),
            m.busy.as_ref()
        ));
    }
}
