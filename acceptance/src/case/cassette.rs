//! A case's cassette (`STUDYLOOP_ACC_CASSETTE`): opened once per case from the parsed
//! selection, defaulting a recording to the run directory's `cassette.jsonl` (so every
//! cell of a run, in any process, appends to one file), and scoped by the trial name.
//!
//! The case's seed goes through it too: a recording stores the seed the cell drew, a
//! replay runs with the recorded one, so the stub mentor says what it said then and the
//! learner's requests hash as they did.

use studyloop_actors::llm::cassette::{CASSETTE_FILE_NAME, Cassette, CassetteError};

use crate::runner::TrialContext;

/// The cassette the selection asks for, if any.
///
/// # Errors
/// The cassette cannot be opened: a replay's file is missing, not a regular file,
/// corrupt or altered.
pub fn open(ctx: &TrialContext) -> Result<Option<Cassette>, CassetteError> {
    ctx.selection
        .cassette
        .as_ref()
        .map(|setting| Cassette::open(setting, Some(&ctx.run_log.dir().join(CASSETTE_FILE_NAME))))
        .transpose()
}

/// The case's cassette and its seed: `fresh` unless a replay recorded one. An error
/// is kept as text for the conversation to fail with (a case is built infallibly).
pub(crate) fn with_seed(ctx: &TrialContext, fresh: u64) -> (Result<Option<Cassette>, String>, u64) {
    match open(ctx) {
        Ok(None) => (Ok(None), fresh),
        Ok(Some(cassette)) => match cassette.seed(&ctx.name, fresh) {
            Ok(seed) => (Ok(Some(cassette)), seed),
            Err(e) => (Err(e.to_string()), fresh),
        },
        Err(e) => (Err(e.to_string()), fresh),
    }
}
