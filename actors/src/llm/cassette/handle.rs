//! [`Cassette`]: one open cassette shared by every client of a process, and [`Tap`]:
//! one client's view of it (its scope, its redactor with its own key as a secret).
//!
//! Lookups are by (scope, request hash, call): the n-th identical request of a cell
//! gets the n-th answer recorded for it in that cell, so two cells asking the same
//! first question, or one learner asking the same thing twice, each replay their own
//! answer. The call counters live in the shared handle, so repeats of a trial in one
//! process keep counting instead of starting over.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use serde_json::Value;
use studyloop_redaction::{RedactionRules, Redactor};

use super::entry::{Answer, Entry, Request, Salt};
use super::file::{self, Loaded};
use super::{CassetteError, CassetteMode, CassetteSetting};
use crate::llm::{ApiKey, ChatResponse, Wire};

/// The file a recording run writes when no file is named: `<run dir>/cassette.jsonl`.
pub const CASSETTE_FILE_NAME: &str = "cassette.jsonl";

/// What evidence records about a cell's cassette.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CassetteEvidence {
    /// `record` or `replay`.
    pub mode: CassetteMode,
    /// The cassette file.
    pub file: String,
    /// Its sha256: of the bytes replayed from, or of the file after the cell recorded.
    pub sha256: Option<String>,
}

type Slot = (String, String);

#[derive(Debug)]
struct Inner {
    mode: CassetteMode,
    path: PathBuf,
    redactor: Redactor,
    loaded: Option<Loaded>,
    /// The salt every key is made under: a replay's from its first line; a record's
    /// read or written under the file lock at its first key or seed.
    salt: Mutex<Option<Salt>>,
    answers: HashMap<Slot, Vec<Answer>>,
    seeds: HashMap<String, Vec<u64>>,
    calls: Mutex<HashMap<Slot, usize>>,
}

/// An open cassette (cheap to clone).
#[derive(Debug, Clone)]
pub struct Cassette {
    inner: Arc<Inner>,
}

/// Every cassette open in this process, so all clients share one call counter.
static OPEN: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

impl Cassette {
    /// Opens the cassette `setting` names (`default_file` when it names none): a
    /// replay reads and checks the whole file now; a record creates nothing until its
    /// first entry. One handle per (mode, file) per process.
    ///
    /// # Errors
    /// No file to use, unreadable, corrupt or tampered cassette, or rules that do not load.
    pub fn open(
        setting: &CassetteSetting,
        default_file: Option<&Path>,
    ) -> Result<Self, CassetteError> {
        let path = setting
            .file
            .clone()
            .or_else(|| default_file.map(Path::to_path_buf))
            .ok_or(CassetteError::NoFile)?;
        let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|w| w.strong_count() > 0);
        if let Some(inner) = open
            .iter()
            .filter_map(Weak::upgrade)
            .find(|i| i.mode == setting.mode && i.path == path)
        {
            return Ok(Self { inner });
        }
        let rules =
            RedactionRules::load_default().map_err(|e| CassetteError::Rules(e.to_string()))?;
        let redactor = Redactor::new(&rules);
        let loaded = match setting.mode {
            CassetteMode::Replay => Some(file::load(&path, &redactor)?),
            CassetteMode::Record => None,
        };
        let mut answers: HashMap<Slot, Vec<Answer>> = HashMap::new();
        let mut seeds: HashMap<String, Vec<u64>> = HashMap::new();
        for entry in loaded.iter().flat_map(|l| l.entries.iter()) {
            match entry {
                Entry::Chat {
                    scope, key, answer, ..
                } => answers
                    .entry((scope.clone(), key.clone()))
                    .or_default()
                    .push(answer.clone()),
                Entry::Seed { scope, seed } => seeds.entry(scope.clone()).or_default().push(*seed),
                Entry::Salt { .. } => {}
            }
        }
        // A replay of a file with no complete line has no salt; any fresh one will do,
        // since every lookup misses.
        let salt = match loaded.as_ref().map(|l| l.salt.clone()) {
            Some(Some(salt)) => Some(salt),
            Some(None) => Some(Salt::fresh().map_err(|source| CassetteError::Read {
                path: path.clone(),
                source,
            })?),
            None => None,
        };
        let inner = Arc::new(Inner {
            mode: setting.mode,
            path,
            redactor,
            loaded,
            salt: Mutex::new(salt),
            answers,
            seeds,
            calls: Mutex::new(HashMap::new()),
        });
        open.push(Arc::downgrade(&inner));
        Ok(Self { inner })
    }

    /// Record or replay.
    #[must_use]
    pub fn mode(&self) -> CassetteMode {
        self.inner.mode
    }

    /// The cassette file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// A replay's cassette ended in a line without its newline, which was ignored.
    #[must_use]
    pub fn torn_tail(&self) -> bool {
        self.inner.loaded.as_ref().is_some_and(|l| l.torn_tail)
    }

    /// What a bundle records: mode, file and sha256 (a replay: of the bytes it serves
    /// from; a record: of the file now).
    #[must_use]
    pub fn evidence(&self) -> CassetteEvidence {
        let sha256 = match &self.inner.loaded {
            Some(loaded) => Some(loaded.sha256.clone()),
            None => file::sha256_now(&self.inner.path),
        };
        CassetteEvidence {
            mode: self.inner.mode,
            file: self.inner.path.display().to_string(),
            sha256,
        }
    }

    /// The complete, checked lines the cassette file holds now for `scope`: what a
    /// cell's bundle keeps of the run's cassette (a UAT bundle lives in the durable
    /// root, away from the run directory). Unreadable or refused lines are left out.
    #[must_use]
    pub fn lines_for(&self, scope: &str) -> Vec<u8> {
        let Ok(bytes) =
            studyloop_regular_file::read_regular(&self.inner.path, file::MAX_CASSETTE_BYTES)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let Some(text) = line.strip_suffix(b"\n") else {
                continue; // a torn tail
            };
            let ours = match super::entry::parse(text, &self.inner.redactor) {
                // The salt line too: without it the kept lines could not be replayed.
                Ok(Entry::Salt { .. }) => true,
                Ok(Entry::Chat { scope: s, .. } | Entry::Seed { scope: s, .. }) => s == scope,
                Err(_) => false,
            };
            if ours {
                out.extend_from_slice(line);
            }
        }
        out
    }

    /// A client's view under `scope` (the cell asking).
    #[must_use]
    pub fn tap(&self, scope: impl Into<String>) -> Tap {
        Tap {
            cassette: self.clone(),
            scope: scope.into(),
            redactor: self.inner.redactor.clone(),
        }
    }

    /// The seed `scope` runs with: a record appends `fresh` and returns it; a replay
    /// returns the seed recorded for the scope (its n-th draw), never a fresh one.
    ///
    /// # Errors
    /// A replay with no seed recorded for the scope (a miss), or a failed append.
    pub fn seed(&self, scope: &str, fresh: u64) -> Result<u64, CassetteError> {
        let call = self.next_call(scope, "seed");
        match self.inner.mode {
            CassetteMode::Record => {
                // The salt line goes first, whatever a cell writes first.
                self.salt()?;
                file::append(
                    &self.inner.path,
                    &super::entry::line(Entry::Seed {
                        scope: scope.to_owned(),
                        seed: fresh,
                    }),
                )?;
                Ok(fresh)
            }
            CassetteMode::Replay => {
                let recorded = self.inner.seeds.get(scope);
                recorded
                    .and_then(|s| s.get(call - 1).copied())
                    .ok_or_else(|| CassetteError::Miss {
                        key: "seed".into(),
                        scope: scope.to_owned(),
                        call,
                        recorded: recorded.map_or(0, Vec::len),
                        path: self.inner.path.clone(),
                    })
            }
        }
    }

    /// The cassette's salt; a record's first call reads it from the file or writes a
    /// fresh one there, under the file lock.
    fn salt(&self) -> Result<Salt, CassetteError> {
        let mut salt = self
            .inner
            .salt
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(salt) = salt.as_ref() {
            return Ok(salt.clone());
        }
        let fresh = file::salt(&self.inner.path, &self.inner.redactor)?;
        *salt = Some(fresh.clone());
        Ok(fresh)
    }

    /// The 1-based count of asks for `key` in `scope` so far, this one included.
    fn next_call(&self, scope: &str, key: &str) -> usize {
        let mut calls = self
            .inner
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let n = calls.entry((scope.to_owned(), key.to_owned())).or_default();
        *n += 1;
        *n
    }
}

/// One client's access to a cassette.
#[derive(Debug, Clone)]
pub struct Tap {
    cassette: Cassette,
    scope: String,
    redactor: Redactor,
}

impl Tap {
    /// The cassette behind it.
    #[must_use]
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// Also redacts the client's own key wherever it appears (keys too short for a
    /// literal rule are left to the patterns; headers are never recorded at all).
    #[must_use]
    pub(crate) fn with_key(mut self, key: &ApiKey) -> Self {
        if let Ok(r) = self.redactor.clone().with_secret("api_key", key.expose()) {
            self.redactor = r;
        }
        self
    }

    pub(crate) fn replaying(&self) -> bool {
        self.cassette.inner.mode == CassetteMode::Replay
    }

    /// `body` as the cassette keys it (a record's first request fixes the salt).
    ///
    /// # Errors
    /// A record whose cassette cannot be opened, or whose first line is no salt.
    pub(crate) fn request(
        &self,
        wire: Wire,
        body: &Value,
        identity: Option<&Value>,
    ) -> Result<Request, CassetteError> {
        let salt = self.cassette.salt()?;
        Ok(Request::new(wire, body, identity, &self.redactor, &salt))
    }

    /// The recorded answer for `request`, or a miss naming it.
    pub(crate) fn serve(&self, request: &Request) -> Result<ChatResponse, CassetteError> {
        let call = self.cassette.next_call(&self.scope, &request.key);
        let inner = &self.cassette.inner;
        let recorded = inner
            .answers
            .get(&(self.scope.clone(), request.key.clone()));
        recorded
            .and_then(|a| a.get(call - 1))
            .map(Answer::response)
            .ok_or_else(|| CassetteError::Miss {
                key: request.key.clone(),
                scope: self.scope.clone(),
                call,
                recorded: recorded.map_or(0, Vec::len),
                path: inner.path.clone(),
            })
    }

    /// Appends `request` and its `response` (redacted).
    pub(crate) fn record(
        &self,
        request: Request,
        response: &ChatResponse,
    ) -> Result<(), CassetteError> {
        self.cassette.next_call(&self.scope, &request.key);
        let line = super::entry::line(Entry::Chat {
            scope: self.scope.clone(),
            key: request.key,
            request: request.canonical,
            answer: Answer::of(response, &self.redactor),
        });
        file::append(&self.cassette.inner.path, &line)
    }
}
