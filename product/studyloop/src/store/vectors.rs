//! `message_vectors`: one embedding per message, written in the transaction
//! that writes the message (when a model is attached to the [`Store`]) and
//! backfilled for messages written without one. A vector is little-endian
//! `f32`s tagged with [`crate::embed::MODEL_ID`]; a row of another model, or one
//! whose length is not the model's width, counts as missing.

use rusqlite::{Connection, OptionalExtension as _, params};

use super::{Store, StoreError, q};
use crate::embed::{Embedder, MODEL_ID};

pub(super) fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

pub(super) fn decode(blob: &[u8], dim: usize) -> Option<Vec<f32>> {
    (blob.len() == dim * 4).then(|| {
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    })
}

/// Embed and store `content` as message `id`'s vector (a text with no tokens
/// gets none; it is then found lexically only).
pub(super) fn put(
    conn: &Connection,
    e: &Embedder,
    id: i64,
    content: &str,
) -> Result<(), StoreError> {
    if let Some(v) = e.embed(content) {
        conn.execute(
            "INSERT INTO message_vectors (message_id, model, vector) VALUES (?1, ?2, ?3)
             ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
            params![id, MODEL_ID, encode(&v)],
        )
        .map_err(q("storing a message embedding"))?;
    }
    Ok(())
}

impl Store {
    /// Embed every message that has no vector of this model (written before
    /// the model was installed, or by another model), in one transaction.
    /// Returns how many were embedded.
    pub fn backfill_vectors(&mut self, e: &Embedder) -> Result<usize, StoreError> {
        let action = "backfilling message embeddings";
        let tx = self.conn.transaction().map_err(q(action))?;
        let todo: Vec<(i64, String)> = {
            let mut st = tx
                .prepare(
                    "SELECT m.id, m.content FROM messages m
                     LEFT JOIN message_vectors v ON v.message_id = m.id AND v.model = ?1
                     WHERE v.message_id IS NULL",
                )
                .map_err(q(action))?;
            st.query_map([MODEL_ID], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(Iterator::collect)
                .map_err(q(action))?
        };
        for (id, content) in &todo {
            put(&tx, e, *id, content)?;
        }
        tx.commit().map_err(q(action))?;
        Ok(todo.len())
    }

    /// The stored vector of message `id` by this model, for tests.
    pub fn message_vector(&self, id: i64, dim: usize) -> Result<Option<Vec<f32>>, StoreError> {
        let blob: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT vector FROM message_vectors WHERE message_id = ?1 AND model = ?2",
                params![id, MODEL_ID],
                |r| r.get(0),
            )
            .optional()
            .map_err(q("reading a message embedding"))?;
        Ok(blob.and_then(|b| decode(&b, dim)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_and_a_wrong_width_is_missing() {
        let v = [0.5f32, -1.25, 3.0];
        assert_eq!(decode(&encode(&v), 3), Some(v.to_vec()));
        assert_eq!(decode(&encode(&v), 4), None);
        assert_eq!(decode(&[1, 2, 3], 1), None);
    }
}
