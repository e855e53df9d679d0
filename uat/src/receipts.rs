//! Receipts: redacted summaries of live acceptance bundles, kept in the repo
//! under `receipts/<date>/<harness>/`, and the coverage matrix
//! `receipts/COVERAGE.md` generated from them ([`coverage`]; never edited by
//! hand: a test regenerates it and compares).
//!
//! A receipt keeps only allow-listed facts (ids, versions, modes, outcome, step
//! names and timings) and passes every string through the pinned redaction
//! rules; raw screens, transcripts and the stub log stay in the private bundle.
//! It lives in `uat` because it needs both `acceptance` (the harness table)
//! and `redaction`, and `acceptance` must not depend on `redaction`.

mod coverage;
pub(crate) mod receipt;

pub use coverage::coverage_markdown;
pub use receipt::{
    COVERAGE_FILE, Collected, Receipt, ReceiptError, ReceiptStep, collect, collect_all, load_all,
};
