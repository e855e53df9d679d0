//! Why a cassette could not be set up, read, written or could not answer.

use std::path::PathBuf;

use crate::env::{STUDYLOOP_ACC_CASSETTE, STUDYLOOP_ACC_CASSETTE_FILE};

/// The words `STUDYLOOP_ACC_CASSETTE` accepts, kept with the error that lists them (the
/// setting's parser names only the error, so the two files are no circle).
pub(crate) const ACCEPTED: &str = "record, replay (unset or blank = off)";

/// Every cassette failure; each message names the value, the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// `STUDYLOOP_ACC_CASSETTE` holds an unknown word.
    #[error(
        "{STUDYLOOP_ACC_CASSETTE}={value:?} is not a cassette mode; accepted: {ACCEPTED}; \
         set it to one of them or unset it"
    )]
    UnknownMode {
        /// The value given.
        value: String,
    },
    /// A cassette file was named but no mode.
    #[error(
        "{STUDYLOOP_ACC_CASSETTE_FILE}={} is set but {STUDYLOOP_ACC_CASSETTE} is not; set \
         {STUDYLOOP_ACC_CASSETTE}=record or {STUDYLOOP_ACC_CASSETTE}=replay, or unset the file",
        file.display()
    )]
    FileWithoutMode {
        /// The file named.
        file: PathBuf,
    },
    /// The cassette file is not an absolute path.
    #[error(
        "{STUDYLOOP_ACC_CASSETTE_FILE}={value:?} is not an absolute path (test processes run \
         in each crate's directory, so a relative one would differ per crate); give an absolute path"
    )]
    RelativeFile {
        /// The value given.
        value: String,
    },
    /// Replay was asked for without a cassette.
    #[error(
        "{STUDYLOOP_ACC_CASSETTE}=replay needs a cassette: set {STUDYLOOP_ACC_CASSETTE_FILE} \
         to the absolute path of a cassette.jsonl that a run with {STUDYLOOP_ACC_CASSETTE}=record wrote"
    )]
    ReplayNeedsFile,
    /// Record mode with neither a file nor a run directory to default to.
    #[error(
        "{STUDYLOOP_ACC_CASSETTE}=record has nowhere to write: set {STUDYLOOP_ACC_CASSETTE_FILE} \
         to an absolute path"
    )]
    NoFile,
    /// The pinned redaction rules did not load, so nothing may be recorded.
    #[error("cannot redact the cassette: {0}")]
    Rules(String),
    /// The cassette could not be read (missing, a FIFO, a symlink, too large).
    #[error(
        "cannot read the cassette {}: {source}; point {STUDYLOOP_ACC_CASSETTE_FILE} at a \
         regular file a recording run wrote",
        path.display()
    )]
    Read {
        /// The cassette.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An entry could not be appended.
    #[error("cannot record into the cassette {}: {source}", path.display())]
    Write {
        /// The cassette.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A complete line is not a cassette entry.
    #[error(
        "the cassette {} line {line} is not a cassette entry ({detail}); re-record it with \
         {STUDYLOOP_ACC_CASSETTE}=record",
        path.display()
    )]
    Corrupt {
        /// The cassette.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A line written by an older build, in a format this one no longer reads.
    #[error(
        "the cassette {} is in format {format}, which keyed each entry on the redacted \
         request (two requests differing only inside a redacted span replayed each other's \
         answer); this build reads format {}, keyed through a salted hash of the request \
         before redaction, and cannot re-key an old file (its requests are stored redacted): \
         delete it and re-record it with {STUDYLOOP_ACC_CASSETTE}=record",
        path.display(),
        super::entry::FORMAT
    )]
    OldFormat {
        /// The cassette.
        path: PathBuf,
        /// The format its line names.
        format: u32,
    },
    /// An entry does not match its own digest or key: it was edited after recording.
    #[error(
        "the cassette {} line {line} was altered after it was recorded ({detail}); a replay \
         serves only what was recorded: re-record it with {STUDYLOOP_ACC_CASSETTE}=record",
        path.display()
    )]
    Tampered {
        /// The cassette.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// Which check failed.
        detail: String,
    },
    /// Replay found no recorded answer for a request; nothing was sent.
    #[error(
        "cassette miss: no recorded answer for request {key} (scope `{scope}`, call {call}; \
         {recorded} recorded for it) in {}; the request differs from what was recorded, and a \
         replay never calls the model: re-record with {STUDYLOOP_ACC_CASSETTE}=record",
        path.display()
    )]
    Miss {
        /// The request hash.
        key: String,
        /// The scope (cell) asking.
        scope: String,
        /// Which call with this hash in this scope (1-based).
        call: usize,
        /// How many answers the cassette holds for the hash in this scope.
        recorded: usize,
        /// The cassette.
        path: PathBuf,
    },
}
