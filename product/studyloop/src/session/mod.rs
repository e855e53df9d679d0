//! The study-session core: start (claim → DB row → session dir → persona →
//! tmux), end (`end_session_common`) and resume. Start and end are journaled
//! (see `journal`): an intent record first, each step recorded, and every
//! command repairs an interrupted one before its own work, so a kill at any
//! instant never leaves two live sessions, a row `active` forever, a harness
//! running behind an `ended` state, or lost notes. The CLI calls these; the
//! web server reuses the same pieces (claim, persona, adapters, DB row
//! creation, `end_session_common`).

mod claim;
mod dir;
mod end;
mod journal;
mod load;
mod orphan;
mod pane;
mod resume;
pub mod spec;
#[cfg(test)]
mod spec_tests;
mod start;

pub use claim::{Claim, ClaimError, Liveness, assess, claim};
pub use dir::{PERSONA_FILE, create as create_session_dir, populate as populate_session_dir};
pub use end::{EndOutcome, Ended, end, end_if_current, end_session_common};
pub(crate) use journal::{Journal, Op, repair_locked};
pub use journal::{KILL_POINTS, KillAt, OpLock, Wait, repair};
pub use load::{Energy, Loaded, SessionError, load};
pub use orphan::live_orphan;
pub use pane::{contained, exports as pane_exports, hatch_command};
pub use resume::{ResumeOutcome, resume};
pub use start::{StartRequest, Started, start};
