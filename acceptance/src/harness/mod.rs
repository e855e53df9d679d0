//! Harness specs as one table: per harness, how it is installed, which
//! surfaces it has, how it is probed, the screen markers and keys the pane
//! driver needs, whether it resumes, and its stub-provider config writer.
//!
//! Adding a harness, or a real authenticated probe for one, is a table row,
//! never an `if` chain in a lane. Names, binaries and core/preview come from
//! `crate::selection::HarnessName`; this table adds what driving needs. The
//! markers and keys were measured on the pinned versions (harnesses/package.json)
//! against `studyloop-stub-provider`; see `shared/reference/harness-offline-*`.

pub mod probe;
pub mod provision;
pub mod stub_config;

use std::time::Duration;

use crate::pane::{Key, Limits, Markers};
use crate::selection::HarnessName;
use stub_config::{StubConfig, StubTarget};

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
    pub exit_keys: &'static [Key],
    /// Resume support.
    pub resume: Resume,
    /// The web-ACP surface, when the harness has one.
    pub acp: Option<AcpSurface>,
    /// The availability probe.
    pub probe: ProbeKind,
    /// Writes its offline config for a stub provider.
    pub stub_config: Option<fn(&StubTarget) -> StubConfig>,
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
    /// run over the socket and through the browser).
    pub fn surfaces(&self) -> Vec<&'static str> {
        let mut s = vec!["cli-tmux"];
        if self.acp.is_some() {
            s.extend(["web-acp", "web-acp-browser"]);
        }
        s
    }
}

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
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["codex-acp"],
            adapter: Some("@zed-industries/codex-acp@0.16.0"),
        }),
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
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["claude-code-acp"],
            adapter: Some("@zed-industries/claude-code-acp@0.16.2"),
        }),
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
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["kiro-cli", "acp"],
            adapter: None,
        }),
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
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["pi-acp"],
            adapter: Some("pi-acp@0.0.24"),
        }),
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
        resume: Resume::Supported,
        acp: Some(AcpSurface {
            argv: &["opencode", "acp"],
            adapter: None,
        }),
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
        resume: Resume::Unsupported {
            finding: "grok 0.0.34 keeps history only in memory: no sessions, no --continue; `study --resume` relaunches it fresh, so the stub counts turn 1 again",
        },
        acp: None,
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

#[cfg(test)]
mod tests {
    use super::*;
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
