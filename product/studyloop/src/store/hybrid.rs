//! Hybrid search: the FTS5 ranking ([`Store::session_search`]'s order) and an
//! embedding ranking (cosine to the query over every message's vector), fused
//! by reciprocal rank: `score = Σ 1 / (k + rank)` over the lists a message is
//! in, ranks from 1, `k` = [`RRF_K`]. Rank fusion needs no score calibration
//! between bm25 and cosine, which live on unrelated scales.
//!
//! Without a usable model the search is the lexical one and the outcome says so
//! (`mode: "lexical"` and the reason), never silently. Messages that have no
//! stored vector yet are embedded in memory for the query and counted in
//! `unembedded`; the next write with a model backfills them.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::params;
use serde::Serialize;

use super::search::{SearchHit, fts_query};
use super::{Store, StoreError, q, vectors};
use crate::embed::{Availability, MODEL_ID, cosine};

/// The RRF constant from Cormack, Clarke and Büttcher (SIGIR 2009): large
/// enough that the first few ranks of one list do not drown the other list.
pub const RRF_K: f64 = 60.0;
/// How deep each list is read before fusing.
const CANDIDATES: usize = 100;

/// Which rankings a search used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// FTS5 only: no usable model (the notice says why).
    Lexical,
    /// FTS5 and embeddings, fused by rank.
    Hybrid,
}

/// One fused hit: the message and where each ranking put it (null: absent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusedHit {
    /// The message.
    #[serde(flatten)]
    pub hit: SearchHit,
    /// The RRF score.
    pub score: f64,
    /// 1-based rank in the FTS5 list, when it matched lexically.
    pub lexical_rank: Option<u32>,
    /// 1-based rank in the embedding list (hybrid mode only).
    pub semantic_rank: Option<u32>,
}

/// A search's answer and how it was made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutcome {
    /// Lexical or hybrid.
    pub mode: SearchMode,
    /// The model that ranked semantically (hybrid), else null.
    pub model: Option<&'static str>,
    /// Why the search is lexical (null when hybrid).
    pub notice: Option<String>,
    /// Best first.
    pub results: Vec<FusedHit>,
    /// `results.len()`.
    pub count: usize,
    /// Messages embedded on the fly because they had no stored vector.
    pub unembedded: usize,
}

impl SearchOutcome {
    /// The outcome of searching no database at all (none written yet).
    pub fn empty(avail: &Availability) -> Self {
        let (mode, model, notice) = describe(avail);
        Self {
            mode,
            model,
            notice,
            results: Vec::new(),
            count: 0,
            unembedded: 0,
        }
    }
}

fn describe(avail: &Availability) -> (SearchMode, Option<&'static str>, Option<String>) {
    match avail {
        Availability::Ready(_) => (SearchMode::Hybrid, Some(MODEL_ID), None),
        Availability::Lexical(why) => (
            SearchMode::Lexical,
            None,
            Some(format!("lexical search only: {why}")),
        ),
    }
}

/// Reciprocal rank fusion of ranked id lists (each best first).
pub fn rrf(lists: &[&[i64]], k: f64) -> Vec<(i64, f64)> {
    let mut score: HashMap<i64, f64> = HashMap::new();
    for list in lists {
        for (i, id) in list.iter().enumerate() {
            *score.entry(*id).or_default() += 1.0 / (k + i as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64)> = score.into_iter().collect();
    // Ties (equal fused score): the lower id, so the order is deterministic.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// Search the database at `path` read-only (none written yet: no results).
///
/// # Errors
/// [`StoreError::EmptyQuery`] for a query with no words; a database error.
pub fn search_db(
    path: &Path,
    query: &str,
    limit: u32,
    avail: &Availability,
) -> Result<SearchOutcome, StoreError> {
    match Store::open_read_only(path)? {
        Some(db) => db.hybrid_search(query, limit, avail),
        None => {
            fts_query(query).ok_or(StoreError::EmptyQuery)?;
            Ok(SearchOutcome::empty(avail))
        }
    }
}

impl Store {
    /// Search with every ranking `avail` allows; best first, at most `limit`.
    pub fn hybrid_search(
        &self,
        query: &str,
        limit: u32,
        avail: &Availability,
    ) -> Result<SearchOutcome, StoreError> {
        let fts = fts_query(query).ok_or(StoreError::EmptyQuery)?;
        let lexical = self.lexical_ids(&fts)?;
        let (semantic, unembedded) = match avail.embedder() {
            Some(e) => self.semantic_ids(e, query)?,
            None => (Vec::new(), 0),
        };
        let fused = rrf(&[&lexical, &semantic], RRF_K);
        let rank_in = |list: &[i64], id| {
            list.iter()
                .position(|x| *x == id)
                .and_then(|p| u32::try_from(p + 1).ok())
        };
        let with_turns = self.has_table("turns")?;
        let mut results = Vec::new();
        for (id, score) in fused
            .into_iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
        {
            results.push(FusedHit {
                hit: self.hit(id, with_turns)?,
                score,
                lexical_rank: rank_in(&lexical, id),
                semantic_rank: rank_in(&semantic, id),
            });
        }
        let (mode, model, notice) = describe(avail);
        Ok(SearchOutcome {
            mode,
            model,
            notice,
            count: results.len(),
            results,
            unembedded,
        })
    }

    /// Message ids in FTS5 order (bm25, then newest).
    fn lexical_ids(&self, fts: &str) -> Result<Vec<i64>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT m.id FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                 WHERE messages_fts MATCH ?1 ORDER BY bm25(messages_fts), m.timestamp DESC LIMIT ?2",
            )
            .map_err(q("searching sessions"))?;
        st.query_map(params![fts, CANDIDATES as i64], |r| r.get(0))
            .and_then(Iterator::collect)
            .map_err(q("searching sessions"))
    }

    /// Message ids by cosine to the query, best first, and how many had to be
    /// embedded on the fly. A query with no tokens ranks nothing.
    fn semantic_ids(
        &self,
        e: &crate::embed::Embedder,
        query: &str,
    ) -> Result<(Vec<i64>, usize), StoreError> {
        let Some(qv) = e.embed(query) else {
            return Ok((Vec::new(), 0));
        };
        let action = "ranking messages by embedding";
        // A database not yet migrated to v3 (`search` opens read-only, without
        // migrating) has no vectors table: every message is embedded here.
        let sql = if self.has_table("message_vectors")? {
            "SELECT m.id, m.content, v.vector FROM messages m
             LEFT JOIN message_vectors v ON v.message_id = m.id AND v.model = ?1"
        } else {
            "SELECT m.id, m.content, NULL FROM messages m WHERE ?1 IS NOT NULL"
        };
        let mut st = self.conn.prepare(sql).map_err(q(action))?;
        let mut rows = st.query([MODEL_ID]).map_err(q(action))?;
        let mut scored: Vec<(i64, f32)> = Vec::new();
        let mut unembedded = 0;
        while let Some(r) = rows.next().map_err(q(action))? {
            let id: i64 = r.get(0).map_err(q(action))?;
            let blob: Option<Vec<u8>> = r.get(2).map_err(q(action))?;
            let v = match blob.and_then(|b| vectors::decode(&b, e.dim())) {
                Some(v) => Some(v),
                None => {
                    unembedded += 1;
                    e.embed(&r.get::<_, String>(1).map_err(q(action))?)
                }
            };
            if let Some(v) = v {
                scored.push((id, cosine(&qv, &v)));
            }
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok((
            scored.into_iter().take(CANDIDATES).map(|s| s.0).collect(),
            unembedded,
        ))
    }

    /// Message `id` as a hit; `with_turns`: the DB has the v5 `turns` table
    /// (without it every hit is a note).
    fn hit(&self, id: i64, with_turns: bool) -> Result<SearchHit, StoreError> {
        let sql = format!(
            "SELECT {} FROM messages m JOIN sessions s ON s.id = m.session_id {} WHERE m.id = ?1",
            super::search::HIT_COLUMNS,
            super::search::turns_join(with_turns)
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut st| st.query_row([id], SearchHit::from_row))
            .map_err(q("searching sessions"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_rewards_agreement_and_keeps_single_list_hits() {
        let fused = rrf(&[&[1, 2, 3], &[3, 4]], RRF_K);
        let ids: Vec<i64> = fused.iter().map(|f| f.0).collect();
        // 3 is in both lists: 1/63 + 1/61 beats 1's 1/61 alone.
        assert_eq!(ids, vec![3, 1, 2, 4]);
        assert!((fused[0].1 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!(rrf(&[&[], &[]], RRF_K).is_empty());
    }

    #[test]
    fn without_a_model_the_search_is_lexical_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.db")).unwrap();
        s.index_study_log(
            "id-1",
            "/s",
            "2026-01-01T00:00:00Z",
            &[("note", "win: window functions".into())],
        )
        .unwrap();
        let avail = Availability::from_setting(None);
        let out = s.hybrid_search("window", 5, &avail).unwrap();
        assert_eq!(
            (out.mode, out.count, out.unembedded),
            (SearchMode::Lexical, 1, 0)
        );
        assert!(
            out.notice
                .as_deref()
                .is_some_and(|n| n.contains("STUDYLOOP_EMBED_MODEL")),
            "{out:?}"
        );
        assert_eq!(out.results[0].lexical_rank, Some(1));
        assert_eq!(out.results[0].semantic_rank, None);
        assert!(matches!(
            s.hybrid_search("  ", 5, &avail),
            Err(StoreError::EmptyQuery)
        ));
    }
}
