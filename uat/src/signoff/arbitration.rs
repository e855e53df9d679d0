//! The stored arbitration of a graded bundle, read strictly (a regular file, no unknown
//! field, this build's schema, this bundle's cell and run) and re-derived from its seat
//! replies with the pinned rubric: the sign-off never trusts stored scores.

use studyloop_rubrics::Facts;

use crate::bundle::Bundle;
use crate::council::{
    self, ARBITRATION_JSON, Arbitration, Rechecked, ReplyReadError, UnknownCouncil,
};
use crate::signoff::Pins;

/// Why a graded bundle's arbitration cannot be used (each becomes a FAIL reason).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArbitrationReadError {
    /// Not a readable regular file within the size bound.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// Not the arbitration JSON this crate writes.
    #[error("{0} (it was edited; grade the bundle again)")]
    Json(#[source] serde_json::Error),
    /// Written by another build's schema.
    #[error("it has schema_version {found}; this build reads {expected} (grade the bundle again)")]
    Schema {
        /// The stored schema version.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
    /// It grades another bundle.
    #[error(
        "it grades cell `{cell}` bundle {run_id}, not cell `{want_cell}` bundle {want_run_id}; grade this bundle"
    )]
    OtherBundle {
        /// The cell it grades.
        cell: String,
        /// The bundle it grades.
        run_id: String,
        /// This bundle's cell.
        want_cell: String,
        /// This bundle's run id.
        want_run_id: String,
    },
    /// It names a council the pinned roster lacks.
    #[error("it names a council the pinned roster does not declare: {0}")]
    Council(#[from] UnknownCouncil),
    /// A seat reply cannot be read.
    #[error(transparent)]
    Replies(#[from] ReplyReadError),
}

/// The arbitration beside `bundle`, if it was graded, read strictly (a regular file,
/// no unknown field) and re-derived from its seat replies with the pinned rubric.
pub(crate) fn read(
    pins: &Pins,
    bundle: &Bundle,
    facts: Facts,
) -> Result<Option<Rechecked>, ArbitrationReadError> {
    let dir = bundle.arbitration_dir();
    let path = dir.join(ARBITRATION_JSON);
    let bytes =
        match studyloop_acceptance::private_fs::read_regular(&path, council::MAX_ARBITRATION_BYTES)
        {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ArbitrationReadError::Read(e)),
        };
    let stored: Arbitration = studyloop_acceptance::evidence::unique_json::from_slice(&bytes)
        .map_err(ArbitrationReadError::Json)?;
    if stored.schema_version != council::ARBITRATION_SCHEMA {
        return Err(ArbitrationReadError::Schema {
            found: stored.schema_version,
            expected: council::ARBITRATION_SCHEMA,
        });
    }
    let m = bundle.manifest();
    if stored.cell != m.cell || stored.bundle_run_id != m.run_id {
        return Err(ArbitrationReadError::OtherBundle {
            cell: stored.cell.clone(),
            run_id: stored.bundle_run_id.clone(),
            want_cell: m.cell.clone(),
            want_run_id: m.run_id.clone(),
        });
    }
    // Re-derived against the seats of the council it names (a council other than the
    // definition's is its own FAIL reason, not a cascade of seat mismatches).
    let council = pins.roster.council(&stored.council)?;
    let replies = council::read_replies(&dir, council)?;
    Ok(Some(council::recheck(
        &pins.rubric,
        council,
        &stored,
        &replies,
        &bundle.citable(),
        facts,
    )))
}
