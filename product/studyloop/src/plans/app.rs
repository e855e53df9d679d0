//! [`PlanApp`]: every plan operation, whichever door calls it. Writes take
//! the plan's lock, re-read the document, apply the change, and replace the
//! file atomically (temp + rename, 0600), so concurrent writers through any
//! door lose no update; the index is updated after the document (the document
//! is the truth; `plan reindex` rebuilds the index from it).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::doc::{Plan, PlanStatus, limits, title_text};
use super::files::{plans_dir, read_doc};
use super::input::{apply_fields, known_keys, opt_int, opt_str};
use super::revision::{IfRevision, body_digest, parse_request_id};
use super::views::{self, gate, readiness};
use super::{PlanError, PlanId, parse};
use crate::context::Ctx;
use crate::fsutil::{self, FileLock};
use crate::store::{CheckpointRecord, PlanIndexRow, RequestRow, Store};

/// The command a plan create is recorded under in the request ledger.
/// The envelope's name for the same operation, so a ledger row reads like the answer.
const CREATE_COMMAND: &str = "plan.new";

/// The plan application over one plans directory and one history DB.
#[derive(Debug, Clone)]
pub struct PlanApp {
    dir: PathBuf,
    pub(super) db: PathBuf,
    /// The DB connection, opened on first use and kept: opening (and the
    /// migration check) costs more than the index write itself.
    conn: Arc<Mutex<Option<Store>>>,
}

/// `create_study_plan` / `POST /api/plans` / `plan new`.
#[derive(Debug, Clone, Default)]
pub struct CreateRequest {
    /// Title.
    pub title: String,
    /// The interview answers (`why`, `success`, `milestones`, …).
    pub answers: Value,
    /// An explicit id (else derived from the title).
    pub plan_id: Option<String>,
    /// Initial status (default draft; active is gated).
    pub status: Option<String>,
    /// The caller's request id: a retry with the same id returns the plan the first
    /// call created and creates nothing (the doors require it; `None` only from the
    /// interactive CLI and tests).
    pub request_id: Option<String>,
}

/// The fields `update_study_plan` / `PATCH` may change, as given (JSON).
#[derive(Debug, Clone)]
pub struct PlanPatch(pub Value);

const ANSWER_KEYS: &[&str] = &[
    "why",
    "success",
    "topics",
    "constraints",
    "out_of_scope",
    "milestones",
    "target_date",
    "resources",
    "energy_floor",
    "review_cadence_days",
    "notes",
];
const PATCH_KEYS: &[&str] = &[
    "title",
    "topics",
    "target_date",
    "energy_floor",
    "review_cadence_days",
    "notes",
    "milestones",
    "status",
    "why",
    "success",
    "constraints",
    "out_of_scope",
    "resources",
];

impl PlanApp {
    /// Over `dir` (documents) and `db` (index and checkpoint log).
    #[must_use]
    pub fn new(dir: PathBuf, db: PathBuf) -> Self {
        Self {
            dir,
            db,
            conn: Arc::new(Mutex::new(None)),
        }
    }

    /// Resolve config, paths and the scope gate, like every DB-touching door.
    ///
    /// # Errors
    /// [`PlanError::Scope`] with the scope gate's message, or a path error.
    pub fn from_ctx(ctx: &Ctx) -> Result<Self, PlanError> {
        let loaded = crate::session::load(ctx).map_err(|e| match e {
            crate::session::SessionError::Scope(s) => PlanError::Scope(s.to_string()),
            other => PlanError::Storage(other.to_string()),
        })?;
        Ok(Self::new(
            plans_dir(ctx, &loaded.paths.state_dir)?,
            loaded.paths.db,
        ))
    }

    /// The documents directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The document of `id`.
    #[must_use]
    pub fn doc_path(&self, id: &PlanId) -> PathBuf {
        self.dir.join(format!("{id}.md"))
    }

    fn lock(&self, id: &PlanId) -> Result<FileLock, PlanError> {
        fsutil::ensure_private_dir(&self.dir)
            .map_err(|e| PlanError::io("create", &self.dir, &e))?;
        let p = self.dir.join(format!(".{id}.lock"));
        FileLock::exclusive(&p).map_err(|e| PlanError::io("lock", &p, &e))
    }

    /// Run `f` on the (cached) history DB connection.
    pub(super) fn with_store<T>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, crate::store::StoreError>,
    ) -> Result<T, PlanError> {
        let mut guard = self
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            *guard = Some(Store::open(&self.db).map_err(|e| PlanError::Storage(e.to_string()))?);
        }
        let store = guard
            .as_mut()
            .ok_or_else(|| PlanError::Storage("no database".into()))?;
        f(store).map_err(|e| PlanError::Storage(e.to_string()))
    }

    fn load(&self, id: &PlanId) -> Result<Plan, PlanError> {
        let path = self.doc_path(id);
        let text = read_doc(&path)?.ok_or_else(|| PlanError::NotFound { id: id.to_string() })?;
        parse::parse(&path, &text, Some(id))
    }

    /// Write the document, then the index. Returns index warnings.
    fn save(&self, plan: &Plan) -> Result<Vec<String>, PlanError> {
        let path = self.doc_path(&plan.id);
        let text = super::render::to_document(plan)?;
        fsutil::atomic_write(&path, text.as_bytes(), 0o600)
            .map_err(|e| PlanError::io("write", &path, &e))?;
        Ok(self.index(plan).err().into_iter().collect())
    }

    fn index_row(&self, p: &Plan) -> PlanIndexRow {
        PlanIndexRow {
            plan_id: p.id.to_string(),
            title: p.title.clone(),
            status: p.status.as_str().into(),
            created: p.created.clone(),
            updated: p.updated.clone(),
            target_date: p.target_date.clone(),
            energy_floor: p.energy_floor,
            milestone_done: p.milestone_done(),
            milestone_total: p.milestones.len(),
            next_milestone_index: p.next_milestone().map(|(i, _)| i),
            ready: readiness(p).ready,
            path: self.doc_path(&p.id).display().to_string(),
        }
    }

    fn index(&self, p: &Plan) -> Result<(), String> {
        self.with_store(|s| s.index_plan(&self.index_row(p)))
            .map_err(|e| format!("the index was not updated ({e}); run `studyloop plan reindex`"))
    }

    /// Lock, re-read, check the expected revision, change, save.
    pub(super) fn mutate(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        f: impl FnOnce(&mut Plan) -> Result<(), PlanError>,
    ) -> Result<Plan, PlanError> {
        let id = PlanId::parse(id)?;
        let _guard = self.lock(&id)?;
        let mut plan = self.load(&id)?;
        // Under the lock, so no write can land between the check and this one.
        expect.check(&plan)?;
        f(&mut plan)?;
        plan.updated = crate::context::now_rfc3339();
        self.save(&plan)?;
        Ok(plan)
    }

    /// Every readable plan (optionally of one status): active first, then
    /// oldest `updated` first; plus one problem line per unreadable document.
    ///
    /// # Errors
    /// The directory cannot be listed.
    pub fn list(&self, status: Option<PlanStatus>) -> Result<(Vec<Plan>, Vec<String>), PlanError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Vec::new(), Vec::new()));
            }
            Err(e) => return Err(PlanError::io("list", &self.dir, &e)),
        };
        let (mut plans, mut problems) = (Vec::new(), Vec::new());
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".md")) else {
                continue;
            };
            let Ok(id) = PlanId::parse(stem) else {
                continue;
            };
            match self.load(&id) {
                Ok(p) if status.is_none_or(|s| s == p.status) => plans.push(p),
                Ok(_) | Err(PlanError::NotFound { .. }) => {}
                Err(e) => problems.push(e.to_string()),
            }
        }
        plans.sort_by(|a, b| {
            (a.status != PlanStatus::Active, &a.updated, &a.id).cmp(&(
                b.status != PlanStatus::Active,
                &b.updated,
                &b.id,
            ))
        });
        problems.sort();
        Ok((plans, problems))
    }

    /// One plan.
    ///
    /// # Errors
    /// `invalid_id`, `not_found`, or a malformed document.
    pub fn get(&self, id: &str) -> Result<Plan, PlanError> {
        self.load(&PlanId::parse(id)?)
    }

    /// The document text of one plan.
    ///
    /// # Errors
    /// As [`Self::get`].
    pub fn markdown(&self, id: &str) -> Result<String, PlanError> {
        self.get(id).map(|p| p.render())
    }

    /// The detail JSON, with `markdown` and `checkpoints` when asked for.
    ///
    /// # Errors
    /// As [`Self::get`]; `invalid` for a history limit outside 1..200.
    pub fn detail(
        &self,
        id: &str,
        include_markdown: bool,
        history: Option<i64>,
    ) -> Result<Value, PlanError> {
        let plan = self.get(id)?;
        let mut d = views::detail(&plan);
        if include_markdown {
            d["markdown"] = json!(plan.render());
        }
        if let Some(limit) = history {
            d["checkpoints"] = json!(self.history(id, limit)?);
        }
        Ok(d)
    }

    /// The checkpoint log of a plan, newest first (kept after deletion).
    ///
    /// # Errors
    /// `invalid_id`; `invalid` for a limit outside 1..200.
    pub fn history(&self, id: &str, limit: i64) -> Result<Vec<CheckpointRecord>, PlanError> {
        let id = PlanId::parse(id)?;
        let limit =
            opt_int(&json!({"history_limit": limit}), "history_limit", 1, 200)?.unwrap_or(20);
        if !self.db.exists() {
            return Ok(Vec::new());
        }
        self.with_store(|s| s.checkpoints(id.as_str(), u32::try_from(limit).unwrap_or(20)))
    }

    /// The planning interview.
    ///
    /// # Errors
    /// The plans cannot be listed.
    pub fn interview(&self) -> Result<Value, PlanError> {
        let (plans, _) = self.list(None)?;
        let existing: Vec<Value> = plans.iter().map(|p| json!({"plan_id": p.id.as_str(), "title": p.title, "status": p.status.as_str()})).collect();
        Ok(json!({
            "questions": views::interview_questions(),
            "seed": {"title": "", "answers": {"why": "", "success": [], "milestones": []}, "status": "draft"},
            "existing_plans": existing,
        }))
    }

    /// Create a plan from interview answers.
    ///
    /// # Errors
    /// `invalid_id`, `invalid`, `conflict`, `not_ready` (status active).
    pub fn create(&self, req: &CreateRequest) -> Result<Plan, PlanError> {
        let title = title_text("title", &req.title, limits::TITLE)?;
        let answers = if req.answers.is_null() {
            json!({})
        } else {
            req.answers.clone()
        };
        known_keys(&answers, "answers", ANSWER_KEYS)?;
        let id = match req.plan_id.as_deref() {
            Some(raw) => PlanId::parse(raw)?,
            None => PlanId::from_title(&title),
        };
        let status = PlanStatus::parse(req.status.as_deref().unwrap_or("draft"))?;
        let now = crate::context::now_rfc3339();
        let mut plan = Plan::empty(id, title, PlanStatus::Draft, now);
        apply_fields(&mut plan, &answers)?;
        gate(&plan, status)?;
        plan.status = status;
        let body = json!({"title": req.title, "answers": answers, "plan_id": req.plan_id, "status": req.status});
        self.create_once(req.request_id.as_deref(), &body, || self.insert(plan))
    }

    /// Create a plan from a whole document (`POST /api/plans {markdown}`).
    ///
    /// # Errors
    /// A malformed document (`plan_error` with the line), `conflict`, `not_ready`.
    pub fn create_from_markdown(
        &self,
        markdown: &str,
        request_id: Option<&str>,
    ) -> Result<Plan, PlanError> {
        if markdown.len() > limits::DOC_BYTES {
            return Err(PlanError::Invalid(format!(
                "the document is larger than {} bytes",
                limits::DOC_BYTES
            )));
        }
        let plan = parse::parse(Path::new("(posted markdown)"), markdown, None)?;
        gate(&plan, plan.status)?;
        self.create_once(request_id, &json!({"markdown": markdown}), || {
            self.insert(plan)
        })
    }

    /// Run `make` once per `request_id`: the ledger lookup, the create and its record
    /// under one lock, so two retries racing cannot both create. A recorded id returns
    /// the plan it created (as it is now); the same id with another body is refused.
    fn create_once(
        &self,
        request_id: Option<&str>,
        body: &Value,
        make: impl FnOnce() -> Result<Plan, PlanError>,
    ) -> Result<Plan, PlanError> {
        let Some(raw) = request_id else {
            return make();
        };
        let request_id = parse_request_id(raw)?;
        let digest = body_digest(body);
        fsutil::ensure_private_dir(&self.dir)
            .map_err(|e| PlanError::io("create", &self.dir, &e))?;
        let lock = self.dir.join(".requests.lock");
        let _guard = FileLock::exclusive(&lock).map_err(|e| PlanError::io("lock", &lock, &e))?;
        if let Some(row) = self.with_store(|s| s.request(request_id))? {
            if row.command != CREATE_COMMAND || row.body_sha256 != digest {
                return Err(PlanError::RequestReused {
                    request_id: request_id.to_owned(),
                    command: row.command,
                });
            }
            return self.get(&row.entity_id).map_err(|e| match e {
                PlanError::NotFound { id } => PlanError::RequestDone {
                    request_id: request_id.to_owned(),
                    id,
                },
                other => other,
            });
        }
        let plan = make()?;
        let row = RequestRow {
            request_id: request_id.to_owned(),
            command: CREATE_COMMAND.into(),
            body_sha256: digest,
            entity_id: plan.id.to_string(),
            created_at: plan.created.clone(),
        };
        self.with_store(|s| s.record_request(&row)).map_err(|e| {
            PlanError::Storage(format!(
                "plan `{}` was created, but its request_id was not recorded ({e}); a retry is refused as a conflict, never a second plan",
                plan.id
            ))
        })?;
        Ok(plan)
    }

    fn insert(&self, mut plan: Plan) -> Result<Plan, PlanError> {
        let _guard = self.lock(&plan.id)?;
        let path = self.doc_path(&plan.id);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(PlanError::Conflict {
                id: plan.id.to_string(),
            });
        }
        let now = crate::context::now_rfc3339();
        if plan.created.is_empty() {
            plan.created.clone_from(&now);
        }
        plan.updated = now;
        self.save(&plan)?;
        Ok(plan)
    }

    /// Apply every given field together and save once.
    ///
    /// # Errors
    /// `invalid`, `not_found`, `not_ready` (status active), a malformed document.
    pub fn update(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        patch: &PlanPatch,
    ) -> Result<Plan, PlanError> {
        known_keys(&patch.0, "update", PATCH_KEYS)?;
        self.mutate(id, expect, |plan| {
            let mut next = plan.clone();
            if let Some(t) = patch.0.get("title").and_then(Value::as_str) {
                next.title = title_text("title", t, limits::TITLE)?;
            } else if patch.0.get("title").is_some_and(|t| !t.is_null()) {
                return Err(PlanError::Invalid("`title` must be a string".into()));
            }
            apply_fields(&mut next, &patch.0)?;
            if let Some(s) = opt_str(&patch.0, "status")? {
                let s = PlanStatus::parse(&s)?;
                gate(&next, s)?;
                next.status = s;
            } else if next.status == PlanStatus::Active {
                // Editing an active plan must not leave it unready.
                gate(&next, PlanStatus::Active)?;
            }
            *plan = next;
            Ok(())
        })
    }

    /// Set the status (activation gated on readiness).
    ///
    /// # Errors
    /// `invalid`, `not_found`, `not_ready`.
    pub fn set_status(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        status: &str,
    ) -> Result<Plan, PlanError> {
        let status = PlanStatus::parse(status)?;
        self.mutate(id, expect, |plan| {
            gate(plan, status)?;
            plan.status = status;
            Ok(())
        })
    }

    /// Set milestone `index` (0-based) done or not done; idempotent.
    ///
    /// # Errors
    /// `invalid_milestone`, `not_found`.
    pub fn set_milestone(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        index: i64,
        done: bool,
    ) -> Result<Plan, PlanError> {
        self.with_milestone(id, expect, index, |_| done)
    }

    /// Flip milestone `index` (the web toggle).
    ///
    /// # Errors
    /// As [`Self::set_milestone`].
    pub fn toggle_milestone(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        index: i64,
    ) -> Result<Plan, PlanError> {
        self.with_milestone(id, expect, index, |was| !was)
    }

    fn with_milestone(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        index: i64,
        done: impl FnOnce(bool) -> bool,
    ) -> Result<Plan, PlanError> {
        self.mutate(id, expect, |plan| {
            let total = plan.milestones.len();
            let m = usize::try_from(index)
                .ok()
                .and_then(|i| plan.milestones.get_mut(i))
                .ok_or(PlanError::InvalidMilestone { index, total })?;
            m.done = done(m.done);
            Ok(())
        })
    }

    /// Delete the document and its index row (checkpoints stay).
    ///
    /// # Errors
    /// `invalid` without confirmation, `not_found`.
    pub fn delete(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        confirmed: bool,
    ) -> Result<Value, PlanError> {
        let id = PlanId::parse(id)?;
        if !confirmed {
            return Err(PlanError::Invalid(format!(
                "deleting `{id}` needs confirmation; pass confirmed=true (CLI: --yes)"
            )));
        }
        let _guard = self.lock(&id)?;
        let path = self.doc_path(&id);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                return Err(PlanError::Malformed {
                    path,
                    line: 1,
                    message: "not a regular file; remove it by hand".into(),
                });
            }
            Err(_) => return Err(PlanError::NotFound { id: id.to_string() }),
        }
        if expect != IfRevision::Unchecked {
            expect.check(&self.load(&id)?)?;
        }
        std::fs::remove_file(&path).map_err(|e| PlanError::io("delete", &path, &e))?;
        let warnings: Vec<String> = match self.with_store(|s| s.unindex_plan(id.as_str())) {
            Ok(()) => Vec::new(),
            Err(e) => vec![e.to_string()],
        };
        Ok(json!({"deleted": true, "plan_id": id.as_str(), "warnings": warnings}))
    }

    /// Rebuild the index from the documents; returns (indexed, problems).
    ///
    /// # Errors
    /// The directory or DB fails.
    pub fn reindex(&self) -> Result<(usize, Vec<String>), PlanError> {
        let (plans, problems) = self.list(None)?;
        let rows: Vec<PlanIndexRow> = plans.iter().map(|p| self.index_row(p)).collect();
        self.with_store(|s| s.reindex_plans(&rows))?;
        Ok((rows.len(), problems))
    }
}
