//! The request ledger (`requests`, migration v6): one row per `request_id` that
//! created something, naming the command, the digest of what was asked and the
//! entity made. The caller holds its own lock around lookup, create and record, so
//! two retries of one request cannot both create.

use rusqlite::{OptionalExtension as _, params};

use super::{Store, StoreError, q};

/// One recorded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRow {
    /// The caller's id.
    pub request_id: String,
    /// What it did, by its envelope name (`plan.new`).
    pub command: String,
    /// sha256 of the canonical request body.
    pub body_sha256: String,
    /// The id of what it created.
    pub entity_id: String,
    /// When (RFC 3339).
    pub created_at: String,
}

impl Store {
    /// The row of `request_id`, if one was recorded.
    pub fn request(&self, request_id: &str) -> Result<Option<RequestRow>, StoreError> {
        self.conn
            .query_row(
                "SELECT request_id, command, body_sha256, entity_id, created_at FROM requests WHERE request_id = ?1",
                [request_id],
                |r| {
                    Ok(RequestRow {
                        request_id: r.get(0)?,
                        command: r.get(1)?,
                        body_sha256: r.get(2)?,
                        entity_id: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                },
            )
            .optional()
            .map_err(q("reading the request ledger"))
    }

    /// Record a request (refused if its id is recorded already).
    pub fn record_request(&self, row: &RequestRow) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO requests (request_id, command, body_sha256, entity_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![row.request_id, row.command, row.body_sha256, row.entity_id, row.created_at],
            )
            .map(drop)
            .map_err(q("recording the request"))
    }
}
