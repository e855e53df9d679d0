//! The names of every variable this crate reads, and their README docs.

use studyloop_actors::EnvVarDoc;

/// Gate of the acceptance tier; must be exactly `1`.
pub const ACC: &str = "STUDYLOOP_ACC";
/// Comma list of harnesses to run.
pub const ACC_HARNESS: &str = "STUDYLOOP_ACC_HARNESS";
/// Which learner backend drives the conversation.
pub const ACC_ACTOR: &str = "STUDYLOOP_ACC_ACTOR";
/// Exactly `1` forces real-auth mode.
pub const ACC_REAL_AUTH: &str = "STUDYLOOP_ACC_REAL_AUTH";
/// The operator's standing approvals, one capability per entry (`approval`).
pub const ACC_APPROVE: &str = "STUDYLOOP_ACC_APPROVE";
/// `stub-provider` (default) or `scrubbed`.
pub const ACC_AUTH_MODE: &str = "STUDYLOOP_ACC_AUTH_MODE";
/// Learner turns per live conversation.
pub const ACC_MAX_TURNS: &str = "STUDYLOOP_ACC_MAX_TURNS";
/// The learner model's output-token cap over one conversation.
pub const ACC_MAX_OUTPUT_TOKENS: &str = "STUDYLOOP_ACC_MAX_OUTPUT_TOKENS";
/// How many attempts each selected trial makes (pass^k, pass@k, flaky).
pub const ACC_REPEAT: &str = "STUDYLOOP_ACC_REPEAT";
/// A fault every cell's stub provider answers model requests with (`401`, …).
pub const ACC_STUB_FAULT: &str = "STUDYLOOP_ACC_STUB_FAULT";
/// Where the runner writes the skip ledger, results log and acceptance bundles.
pub const ACC_RESULTS_DIR: &str = "STUDYLOOP_ACC_RESULTS_DIR";
/// This runner's shard of a partitioned run (`hash:K/N`, `count:K/N` or `time:K/N`).
pub const ACC_PARTITION: &str = "STUDYLOOP_ACC_PARTITION";
/// Rerun only the trials that failed in an earlier run (`latest` or its directory).
pub const ACC_RERUN_FAILED: &str = "STUDYLOOP_ACC_RERUN_FAILED";
/// The UAT tier's own gate, on top of `STUDYLOOP_ACC`.
pub const UAT: &str = "STUDYLOOP_UAT";
/// Overrides the durable UAT evidence root.
pub const UAT_EVIDENCE_ROOT: &str = "STUDYLOOP_UAT_EVIDENCE_ROOT";

/// Every variable this crate reads; the README's env table lists them with owner
/// `studyloop-acceptance`.
pub const ENV_VARS: &[EnvVarDoc] = &[
    EnvVarDoc {
        name: ACC,
        meaning: "Gate of the acceptance tier: exactly `1` runs the trials; anything else skips every trial, naming this variable",
        default: Some("unset: the tier is off"),
    },
    EnvVarDoc {
        name: ACC_HARNESS,
        meaning: "Comma list of harnesses to run (codex, claude, kiro, pi, opencode, grok); items trimmed, empty items dropped, repeats ignored; an unknown name fails the run",
        default: Some("all six"),
    },
    EnvVarDoc {
        name: ACC_ACTOR,
        meaning: "Which learner backend drives the conversation: scripted, gateway, direct or harness; an unknown name fails the run",
        default: Some("scripted"),
    },
    EnvVarDoc {
        name: ACC_AUTH_MODE,
        meaning: "How a harness reaches a model: stub-provider (a local stub provider), scrubbed (no credentials at all) or local-model (stub mentor; learner and judges a local model behind LiteLLM, `just deps-model`)",
        default: Some("stub-provider"),
    },
    EnvVarDoc {
        name: ACC_REAL_AUTH,
        meaning: "Exactly `1`: the harness keeps your real HOME and credentials while every StudyLoop pointer stays scratch (may bill); any other non-empty value fails the run",
        default: Some("unset: off"),
    },
    EnvVarDoc {
        name: ACC_APPROVE,
        meaning: "Standing approvals of what may bill, one capability per comma-separated entry: `harness:<h>` (the mentor's model calls and probes under real-auth), `learner:<provider>/<model>` (gateway and direct learners), `judge:<council>/<seat>`; optionally `[chargeable,credentialed,writes-real-home]` to approve only those reasons; no wildcard, no prefix, no whitespace; a malformed or unknown entry fails the run before any trial; an unapproved capability is a named skip",
        default: Some("unset: nothing billed is approved"),
    },
    EnvVarDoc {
        name: ACC_MAX_TURNS,
        meaning: "Learner turns every live conversation drives (lanes, and UAT journeys whose sign-off definition cell writes no `budget`; a cell's `budget` wins), 1 to 50; anything else fails the run",
        default: Some("3"),
    },
    EnvVarDoc {
        name: ACC_MAX_OUTPUT_TOKENS,
        meaning: "Output tokens the learner's model may spend over one conversation (sent as each request's `max_tokens`, shrunk to what is left), 1 to 1000000; anything else fails the run; a UAT cell's definition `budget` wins over it",
        default: Some("unset: no cap beyond 200 per turn"),
    },
    EnvVarDoc {
        name: ACC_REPEAT,
        meaning: "Attempts per selected trial, 1 to 20: each attempt writes its own bundle and results line (with `attempt`); the trial fails unless every attempt passes (pass^k), and the report shows pass^k, pass@k and flaky; anything else fails the run",
        default: Some("1"),
    },
    EnvVarDoc {
        name: ACC_STUB_FAULT,
        meaning: "A fault every cell's stub provider answers each model request with, one stub fault-file line: `401` (the not-logged-in drill: every lane ends as the named skip \"not logged in: …\"), `429`, `500`, `stall <ms>` or `truncate <n>`, in stub-provider or local-model mode; anything else fails the run",
        default: Some("unset: healthy stubs"),
    },
    EnvVarDoc {
        name: ACC_RESULTS_DIR,
        meaning: "Run directory for the skip ledger, the results log and acceptance evidence bundles",
        default: Some(
            "`target/studyloop/runs/<run-key>/` (run-key = `NEXTEST_RUN_ID`, else a fresh run id)",
        ),
    },
    EnvVarDoc {
        name: ACC_PARTITION,
        meaning: "This runner's shard, `hash:K/N` or `count:K/N` (nextest's meaning) or `time:K/N` (balanced by the receipts' recorded durations); must agree with the runner's `--partition` and nextest's own `--partition` when those are given",
        default: Some("unset: unsharded (or nextest's `--partition` when nextest was given one)"),
    },
    EnvVarDoc {
        name: ACC_RERUN_FAILED,
        meaning: "Run only the trials that failed or errored (flaky ones included) in an earlier run: `latest` (the newest other run directory beside this one) or that run's directory; into a new run directory linked to it, each attempt numbered after the earlier ones (`just rerun-failed`)",
        default: Some("unset: every selected trial"),
    },
    EnvVarDoc {
        name: UAT,
        meaning: "Gate of the UAT sign-off tier, needed in addition to STUDYLOOP_ACC=1: exactly `1` runs the journeys",
        default: Some("unset: the tier is off"),
    },
    EnvVarDoc {
        name: UAT_EVIDENCE_ROOT,
        meaning: "Durable root for UAT evidence bundles (never swept); read from the real environment, never a scratch one",
        default: Some("`~/.local/share/studyloop/uat/<run-id>/`"),
    },
];
