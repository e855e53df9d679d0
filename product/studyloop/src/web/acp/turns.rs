//! The turn log of a web ACP session: the console's own stream, written to
//! the search index as the session runs (`store::turns`). A turn is the
//! prompt the agent was sent and the text of the agent's
//! `agent_message_chunk` updates until that prompt's `turn_end` (thoughts,
//! tool calls and plans are not part of the reply text). Turns are numbered
//! `t1`, `t2`, … in prompt order; two prompts in flight at once share the
//! reply text that arrives meanwhile (ACP does not say which prompt a chunk
//! answers).
//!
//! Writes run on one thread of their own, so a slow or locked database never
//! holds up the conversation, and a failed write is logged on stderr and
//! dropped: indexing never fails a turn.

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::embed::Embedder;
use crate::store::{MAX_TURN_TEXT_BYTES, NewTurn, Store};

/// One side of a turn on its way to the writer.
struct Side {
    turn_id: String,
    role: &'static str,
    text: String,
    at: String,
}

#[derive(Default)]
struct Open {
    /// How many prompts were sent.
    count: u32,
    /// The reply text so far (bounded), when a turn is open.
    reply: Option<String>,
}

/// Where a session's turns go; cheap to clone (shared state).
#[derive(Clone)]
pub struct TurnLog {
    open: Arc<Mutex<Open>>,
    writer: mpsc::Sender<Side>,
}

impl std::fmt::Debug for TurnLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnLog").finish_non_exhaustive()
    }
}

impl TurnLog {
    /// A log writing session `session_id`'s turns into the DB at `db` (with
    /// embeddings when `embedder` is given); `project_path` is the session dir.
    #[must_use]
    pub fn new(
        db: PathBuf,
        session_id: String,
        project_path: String,
        embedder: Option<Arc<Embedder>>,
    ) -> Self {
        let (writer, sides) = mpsc::channel::<Side>();
        let spawned = std::thread::Builder::new()
            .name("turn-log".into())
            .spawn(move || write_all(&db, &session_id, &project_path, embedder, &sides));
        if let Err(e) = spawned {
            eprintln!("studyloop: conversation turns will not be searchable: {e}");
        }
        Self {
            open: Arc::default(),
            writer,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn send(&self, turn: u32, role: &'static str, text: String) {
        // The writer thread gone (it could not start) is already reported.
        let _ = self.writer.send(Side {
            turn_id: format!("t{turn}"),
            role,
            text,
            at: crate::clock::now().to_string(),
        });
    }

    /// A prompt was sent: it opens turn `t<n>` (closing the previous one).
    pub fn prompt(&self, text: &str) {
        let turn = {
            let mut open = self.state();
            if let Some(reply) = open.reply.take() {
                let n = open.count;
                drop(open);
                self.send(n, "agent", reply);
                open = self.state();
            }
            open.count += 1;
            open.reply = Some(String::new());
            open.count
        };
        self.send(turn, "user", text.to_owned());
    }

    /// A `session/update`'s params: an agent message chunk's text joins the reply.
    pub fn update(&self, params: &Value) {
        let update = &params["update"];
        if update["sessionUpdate"] != "agent_message_chunk" {
            return;
        }
        let Some(text) = update["content"]["text"].as_str() else {
            return;
        };
        if let Some(reply) = self.state().reply.as_mut() {
            // Held bounded: what store::turns would cut anyway never piles up here.
            let room = MAX_TURN_TEXT_BYTES.saturating_sub(reply.len());
            reply.push_str(&text[..text.floor_char_boundary(room)]);
        }
    }

    /// The open turn ended (its `turn_end`, or the session's stop): its reply
    /// is written.
    pub fn turn_end(&self) {
        let (turn, reply) = {
            let mut open = self.state();
            (open.count, open.reply.take())
        };
        if let Some(reply) = reply {
            self.send(turn, "agent", reply);
        }
    }
}

fn write_all(
    db: &std::path::Path,
    session_id: &str,
    project_path: &str,
    embedder: Option<Arc<Embedder>>,
    sides: &mpsc::Receiver<Side>,
) {
    let mut store: Option<Store> = None;
    for side in sides {
        if store.is_none() {
            match Store::open(db) {
                Ok(s) => store = Some(s.with_embedder(embedder.clone())),
                Err(e) => {
                    eprintln!("studyloop: turn {} not indexed: {e}", side.turn_id);
                    continue;
                }
            }
        }
        let Some(s) = store.as_mut() else { continue };
        let written = s.record_turn(&NewTurn {
            session_id,
            project_path,
            turn_id: &side.turn_id,
            role: side.role,
            text: &side.text,
            created_at: &side.at,
        });
        if let Err(e) = written {
            eprintln!(
                "studyloop: turn {} ({}) not indexed: {e}",
                side.turn_id, side.role
            );
            // Reopened for the next side: the handle may be what failed.
            store = None;
        }
    }
}
