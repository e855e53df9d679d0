//! `studyloop-uat report`: one self-contained static HTML site from run
//! directories, readable from `file://` with no server and no network.
//!
//! An overview (`index.html`: the verdict, the trials table with what needs
//! attention first and its filters (`attention`, `filter`), the harness ×
//! surface grid of status glyphs with each trial's outcome, duration,
//! fidelity, attempts, pass^k / pass@k / flaky and skip reason on hover and
//! focus, and the UAT sign-off verdict with every reason) and a page per cell (`cells/*.html`:
//! attempts, manifest and its verification, step timeline with every check,
//! transcript with each reply's source, pane screens, browser screenshots,
//! ACP/WS frames, the stub's request log, the arbitration), with each pane's
//! recording (`.cast.gz`) played by the vendored asciinema-player (`player`)
//! and its conversation exported, redacted, as ATIF and OTLP files (`exports`).
//!
//! `--compare OLD NEW` (`compare`) writes one page of what changed between
//! two runs: new failures, fixed, newly flaky, time and fidelity changes per
//! trial, trials added or removed, changed pins, broken steps with the rows
//! to change and the adapter facts (`compare_facts`), also as `compare.json`.
//! The report's `drift.html` (`drift`) lists the `just drift` runs beside the
//! runs directory from those files.
//!
//! Safety: every recorded string reaches the page through the one escaping
//! function (`studyloop_acceptance::markup::escape`); pages carry a CSP that
//! allows no script but the report's own files (the player, the index's filters); files are read only as regular files below the run
//! directory (or a bundle a results line names), never through a symlink
//! (`source`), and capped in size. `--redacted` passes every string through the
//! pinned redaction rules first and leaves out what cannot be redacted (images).
//!
//! What it is not: a viewer of live runs, or a second sign-off (the verdict is
//! the sign-off's own, computed by `signoff::run`).

mod artefacts;
mod attention;
mod build;
mod cell;
mod compare;
mod compare_facts;
mod drift;
mod error;
mod exports;
mod filter;
mod html;
mod latest;
mod model;
mod overview;
mod player;
mod recordings;
mod source;
mod status;

pub use build::{ReportOptions, Written, build};
pub use compare::{CompareError, CompareOptions, Compared, compare};
pub use compare_facts::{BrokenStep, FactDiff, StoreRecord, VersionFact};
pub use drift::COMPARE_JSON;
pub use error::ReportError;
pub use latest::{LatestRun, latest_runs};
