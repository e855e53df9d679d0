//! The lanes' validator of what the product stored: the session's DB row carries
//! the persona hash the state reported (both read through `crate::door`).

use crate::case::Case;
use crate::door::{ProductDb, SessionState, StateField};
use crate::validate::CheckError;

pub(crate) fn db_row(l: &mut Case<'_>, state: &SessionState) -> Result<(), CheckError> {
    let id = state.require(StateField::StudySessionId)?;
    let want = state.require(StateField::PersonaHash)?;
    let db = ProductDb::path_in(l.scratch().map_err(|_| CheckError::NoScratch)?.config_dir());
    let got = ProductDb::open(&db)?.persona_hash(id)?;
    if got == want {
        Ok(())
    } else {
        Err(CheckError::PersonaHash {
            got,
            want: want.to_owned(),
        })
    }
}
