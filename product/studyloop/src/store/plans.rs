//! The study-plan index (`study_plans`, derived from the documents and
//! rebuildable) and the checkpoint log (`study_plan_checkpoints`,
//! append-only). Callers pass plain rows; the documents stay the truth.

use rusqlite::params;
use serde::Serialize;

use super::{Store, StoreError, q};

/// One indexed plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanIndexRow {
    /// Id.
    pub plan_id: String,
    /// Title.
    pub title: String,
    /// Status.
    pub status: String,
    /// Created.
    pub created: String,
    /// Updated.
    pub updated: String,
    /// Target date.
    pub target_date: Option<String>,
    /// Energy floor.
    pub energy_floor: Option<u8>,
    /// Milestones done.
    pub milestone_done: usize,
    /// Milestones in total.
    pub milestone_total: usize,
    /// The next milestone's index.
    pub next_milestone_index: Option<usize>,
    /// Readiness.
    pub ready: bool,
    /// The document.
    pub path: String,
}

/// One logged checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointRecord {
    /// Row id.
    pub id: i64,
    /// The plan.
    pub plan_id: String,
    /// start, mid or end.
    pub phase: String,
    /// Study session ("" when none).
    pub study_id: String,
    /// When.
    pub recorded_at: String,
    /// Done at the time.
    pub milestone_done: usize,
    /// Total at the time.
    pub milestone_total: usize,
    /// Summary.
    pub note: String,
}

fn n(v: usize) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn upsert(conn: &rusqlite::Connection, r: &PlanIndexRow) -> rusqlite::Result<usize> {
    conn.execute(
        "INSERT INTO study_plans (plan_id, title, status, created, updated, target_date, energy_floor,
             milestone_done, milestone_total, next_milestone_index, ready, path)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT(plan_id) DO UPDATE SET title = excluded.title, status = excluded.status,
             created = excluded.created, updated = excluded.updated, target_date = excluded.target_date,
             energy_floor = excluded.energy_floor, milestone_done = excluded.milestone_done,
             milestone_total = excluded.milestone_total, next_milestone_index = excluded.next_milestone_index,
             ready = excluded.ready, path = excluded.path",
        params![
            r.plan_id,
            r.title,
            r.status,
            r.created,
            r.updated,
            r.target_date,
            r.energy_floor,
            n(r.milestone_done),
            n(r.milestone_total),
            r.next_milestone_index.map(n),
            r.ready,
            r.path
        ],
    )
}

impl Store {
    /// Insert or replace one plan's index row.
    pub fn index_plan(&self, row: &PlanIndexRow) -> Result<(), StoreError> {
        upsert(&self.conn, row)
            .map(drop)
            .map_err(q("indexing a study plan"))
    }

    /// Drop one plan's index row (its checkpoints stay).
    pub fn unindex_plan(&self, plan_id: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM study_plans WHERE plan_id = ?1", [plan_id])
            .map(drop)
            .map_err(q("removing a study plan from the index"))
    }

    /// Replace the whole index with `rows` in one transaction.
    pub fn reindex_plans(&mut self, rows: &[PlanIndexRow]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(q("starting the plan reindex"))?;
        tx.execute("DELETE FROM study_plans", [])
            .map_err(q("clearing the plan index"))?;
        for r in rows {
            upsert(&tx, r).map_err(q("indexing a study plan"))?;
        }
        tx.commit().map_err(q("committing the plan reindex"))
    }

    /// The indexed ids, sorted.
    pub fn indexed_plan_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT plan_id FROM study_plans ORDER BY plan_id")
            .map_err(q("listing the plan index"))?;
        st.query_map([], |r| r.get(0))
            .and_then(Iterator::collect)
            .map_err(q("listing the plan index"))
    }

    /// Append a checkpoint; returns its row id.
    pub fn add_checkpoint(&self, c: &CheckpointRecord) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO study_plan_checkpoints (plan_id, phase, study_id, recorded_at, milestone_done, milestone_total, note)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![c.plan_id, c.phase, c.study_id, c.recorded_at, n(c.milestone_done), n(c.milestone_total), c.note],
            )
            .map_err(q("recording a plan checkpoint"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The newest `limit` checkpoints of a plan, newest first.
    pub fn checkpoints(
        &self,
        plan_id: &str,
        limit: u32,
    ) -> Result<Vec<CheckpointRecord>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, plan_id, phase, study_id, recorded_at, milestone_done, milestone_total, note
                 FROM study_plan_checkpoints WHERE plan_id = ?1 ORDER BY id DESC LIMIT ?2",
            )
            .map_err(q("reading plan checkpoints"))?;
        st.query_map(params![plan_id, limit], |r| {
            Ok(CheckpointRecord {
                id: r.get(0)?,
                plan_id: r.get(1)?,
                phase: r.get(2)?,
                study_id: r.get(3)?,
                recorded_at: r.get(4)?,
                milestone_done: usize::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
                milestone_total: usize::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
                note: r.get(7)?,
            })
        })
        .and_then(Iterator::collect)
        .map_err(q("reading plan checkpoints"))
    }
}
