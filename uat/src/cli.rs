//! The `studyloop-uat` command line: its subcommands and their arguments, parsed
//! by clap. The binary (`src/main.rs`) only dispatches them; keeping the grammar
//! here keeps the binary short and lets a test read the same definition.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// The parsed command line.
#[derive(Parser)]
#[command(
    name = "studyloop-uat",
    about = "UAT sign-off, council grading and evidence retention"
)]
pub struct Cli {
    /// The subcommand and its arguments.
    #[command(subcommand)]
    pub command: Command,
}

/// One subcommand of `studyloop-uat`.
#[derive(Subcommand)]
pub enum Command {
    /// Decide PASS/FAIL from run directories (one per shard) and/or evidence bundles.
    Signoff {
        /// Run directories (results.jsonl, skip-ledger.jsonl) and/or bundle directories.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Where the redacted summary goes on PASS.
        #[arg(long, value_name = "DIR", default_value_os_t = default_releases())]
        out: PathBuf,
    },
    /// Grade one evidence bundle with a council; writes <bundle>.arbitration/.
    Grade {
        /// The bundle directory.
        bundle: PathBuf,
        /// The council to convene (default: the one the sign-off definition accepts).
        #[arg(long)]
        council: Option<String>,
        /// Base URL of a running studyloop-stub-provider, for stub seats.
        #[arg(long, value_name = "URL")]
        stub_url: Option<String>,
    },
    /// Copy redacted receipts of the lane bundles in run directories into
    /// receipts/<date>/<harness>/ and regenerate receipts/COVERAGE.md.
    Receipts {
        /// Run directories (default: every target/studyloop/runs/*).
        runs: Vec<PathBuf>,
        /// The receipts directory.
        #[arg(long, value_name = "DIR", default_value_os_t = studyloop_acceptance::bins::workspace_root().join("receipts"))]
        out: PathBuf,
    },
    /// Build a static HTML report (opens from file://, no server) of run directories.
    Report {
        /// Run directories (one per shard or run).
        #[arg(required_unless_present_any = ["latest", "compare"], conflicts_with_all = ["latest", "compare"])]
        runs: Vec<PathBuf>,
        /// Instead of a report: one page comparing two runs (new failures, fixed,
        /// newly flaky, time and fidelity changes, added/removed trials, changed
        /// pins), into --out (default: <NEW_RUN>/compare).
        #[arg(long, num_args = 2, value_names = ["OLD_RUN", "NEW_RUN"], conflicts_with_all = ["latest", "redacted"])]
        compare: Option<Vec<PathBuf>>,
        /// With --compare: exit 1 when a trial newly fails or a step that held in
        /// OLD_RUN fails in NEW_RUN (`just drift`).
        #[arg(long, requires = "compare")]
        fail_on_breaks: bool,
        /// Instead of run directories: a report of the latest acceptance run and
        /// one of the latest UAT run under this runs directory (target/studyloop/runs).
        #[arg(long, value_name = "RUNS_ROOT", conflicts_with = "out")]
        latest: Option<PathBuf>,
        /// Where the site goes (default: <first run dir>/report, or report-redacted).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// The shareable variant: only what the pinned redaction rules pass, no images.
        #[arg(long)]
        redacted: bool,
    },
    /// Merge the run directories of a partitioned run into one cell table; exit 1
    /// on a missing or contradicting shard, a difference from --expect, or a
    /// failed cell.
    Merge {
        /// Run directories, one per shard.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// An unsharded run directory whose cells and outcomes the merge must equal.
        #[arg(long, value_name = "DIR")]
        expect: Option<PathBuf>,
    },
    /// Real-auth certification of one harness, by hand (never in CI): preflight,
    /// the harness's cells, the UAT journeys, sign-off, receipts and COVERAGE.md.
    Certify {
        /// The harness to certify (codex, claude, kiro, pi, opencode, grok).
        harness: String,
        /// Required: says you mean to bill your own login.
        #[arg(long)]
        real_auth: bool,
        /// The checkout whose commit the run certifies.
        #[arg(long, value_name = "DIR", default_value_os_t = studyloop_acceptance::bins::workspace_root())]
        repo: PathBuf,
    },
    /// Before `studyloop-uat certify HARNESS --real-auth` launches anything: the name, a clean tree, the
    /// harness's real credentials and the release council's keys. Exit 0 ready,
    /// 3 skipped (what is missing and how to fix it), 2 refused (bad name, dirty tree).
    Preflight {
        /// The harness to certify (codex, claude, kiro, pi, opencode, grok).
        harness: String,
        /// The checkout whose commit the run certifies.
        #[arg(long, value_name = "DIR", default_value_os_t = studyloop_acceptance::bins::workspace_root())]
        repo: PathBuf,
    },
    /// Export one bundle's conversation, redacted, for other tools: an ATIF
    /// trajectory (Harbor) or OpenTelemetry GenAI spans (an OTLP/JSON file).
    ExportTrajectory {
        /// The bundle directory.
        bundle: PathBuf,
        /// `atif` or `otlp`.
        #[arg(long, value_enum)]
        format: TrajectoryFormat,
        /// Where the JSON goes (default: standard output). Never inside the
        /// bundle: its inventory would no longer match.
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
    },
    /// Make a release manager's ed25519 key pair: DIR/release-signing.pk8 (private,
    /// PKCS#8, 0600, in a 0700 directory) and DIR/release-signing.pub (64 hex
    /// characters). Never overwrites a key; never prints the private key.
    Keygen {
        /// The key directory (created 0700 when absent).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Sign the release record of a run directory (its sign-off summary, every
    /// bundle's manifest sha256, every arbitration file's sha256) into
    /// RUN_DIR/signoff.sig. Exit 1 when the run's sign-off is FAIL.
    Sign {
        /// The run directory.
        run: PathBuf,
        /// The private key file (`release-signing.pk8`).
        #[arg(long, value_name = "PRIVATE_KEY")]
        key: PathBuf,
    },
    /// Check RUN_DIR/signoff.sig with a public key against the run as it is now.
    /// Exit 0 valid; 1 absent, another key's, or something signed changed.
    Verify {
        /// The signed run directory.
        #[arg(long, value_name = "RUN_DIR")]
        signed: PathBuf,
        /// The signer's public key file (`release-signing.pub`).
        #[arg(long, value_name = "PUBLIC_KEY")]
        pubkey: PathBuf,
    },
    /// List (or with --apply, delete) durable bundles older than an age.
    Prune {
        /// Age cut-off: whole days or hours, e.g. 90d or 36h.
        #[arg(long, value_name = "AGE")]
        older_than: String,
        /// The durable evidence root (default: STUDYLOOP_UAT_EVIDENCE_ROOT, else ~/.local/share/studyloop/uat).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Delete; without it nothing is touched.
        #[arg(long)]
        apply: bool,
    },
}

/// The formats of `export-trajectory`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TrajectoryFormat {
    /// Harbor's Agent Trajectory Interchange Format.
    Atif,
    /// OTLP/JSON trace export with GenAI semantic-convention spans.
    Otlp,
}

/// `releases/` at the workspace root, where signed release records go.
fn default_releases() -> PathBuf {
    studyloop_acceptance::bins::workspace_root().join("releases")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// clap's own consistency checks, and one summary per subcommand that speaks of
    /// that subcommand: preflight's summary was once glued onto certify's, and
    /// preflight had none.
    #[test]
    fn every_subcommand_has_its_own_summary() {
        let cli = super::Cli::command();
        cli.clone().debug_assert();
        for sub in cli.get_subcommands() {
            let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
            assert!(!about.is_empty(), "`{}` has no summary", sub.get_name());
        }
        let about = |name: &str| {
            cli.find_subcommand(name)
                .and_then(|s| s.get_about())
                .map(ToString::to_string)
                .unwrap_or_default()
        };
        assert!(about("certify").starts_with("Real-auth certification"));
        assert!(!about("certify").contains("Exit 0 ready"));
        assert!(about("preflight").contains("launches anything"));
    }
}
