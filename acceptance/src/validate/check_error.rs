//! Why a lane or journey check failed: one typed error per way the product,
//! the stub or the harness can disagree with what a case expects. Every
//! message names the value seen and the one expected.

use std::path::PathBuf;

/// A failed check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// `session-state.json` could not be read or parsed.
    #[error("cannot read the session state {path}: {detail}")]
    State {
        /// The file.
        path: PathBuf,
        /// The I/O or JSON error.
        detail: String,
    },
    /// A string field the state must carry is missing or empty.
    #[error("session-state.json has no `{field}` (state: {state})")]
    StateField {
        /// The field.
        field: String,
        /// The whole state, as seen.
        state: String,
    },
    /// The session is not in the mode the step expects.
    #[error("state mode is {got}, expected {want}: {state}")]
    StateMode {
        /// What it said.
        got: String,
        /// What it must say.
        want: &'static str,
        /// The whole state, as seen.
        state: String,
    },
    /// The stub's request log could not be read (or there is no stub).
    #[error("the stub request log: {0}")]
    StubLog(String),
    /// No request was answered as this stub turn.
    #[error("no request in the stub log was answered as turn {n} (nonce {nonce})")]
    TurnUnanswered {
        /// The stub turn.
        n: u64,
        /// Its nonce.
        nonce: String,
    },
    /// The request answered as turn `n` carried another history length.
    #[error("turn {n}: the request carried {got} user turns, expected {n}")]
    HistoryLength {
        /// The stub turn.
        n: u64,
        /// User turns it carried.
        got: u64,
    },
    /// The request answered as turn `n` carried another persona.
    #[error("turn {n}: persona {got:?} reached the model, expected {want:?}")]
    Persona {
        /// The stub turn.
        n: u64,
        /// What reached the model.
        got: Option<String>,
        /// What must.
        want: String,
    },
    /// A reply does not carry the stub's nonce for its turn.
    #[error("turn {n}: reply {reply:?} lacks the stub's {want:?}")]
    ReplyNotProven {
        /// The stub turn.
        n: u64,
        /// The reply seen.
        reply: String,
        /// The marker it must contain.
        want: String,
    },
    /// A reply was empty (real-auth mode: any text proves a reply).
    #[error("turn {n}: empty reply")]
    EmptyReply {
        /// The turn.
        n: u64,
    },
    /// The product's database could not be read.
    #[error("reading {db}: {detail}")]
    Db {
        /// The database file.
        db: PathBuf,
        /// The SQLite error.
        detail: String,
    },
    /// The session has no row.
    #[error("no study_sessions row with id {id} in {db}")]
    NoSessionRow {
        /// The session id.
        id: String,
        /// The database file.
        db: PathBuf,
    },
    /// The session's row lacks its persona hash.
    #[error("study_sessions row {id} has {what}")]
    SessionRow {
        /// The session id.
        id: String,
        /// What is wrong (`no persona_hash`, `an empty persona_hash`).
        what: &'static str,
    },
    /// The stored persona hash differs from the state's.
    #[error("study_sessions.persona_hash {got} differs from the state's {want}")]
    PersonaHash {
        /// The stored hash.
        got: String,
        /// The state's hash.
        want: String,
    },
    /// `studyloop doctor --json` said or did something it must not.
    #[error("doctor --json: {0}")]
    Doctor(String),
    /// The session's stop did not end it as the product promises.
    #[error("expected a stopped frame with reason cancel, got {0}")]
    NotStopped(String),
    /// A multi-line learner turn did not arrive as text.
    #[error("the pasted turn: {0}")]
    Paste(String),
    /// A tool call over MCP did not reach the product (`mcp::` lane).
    #[error("MCP: {0}")]
    Mcp(String),
    /// The case has no scratch world yet.
    #[error("no scratch world")]
    NoScratch,
}
