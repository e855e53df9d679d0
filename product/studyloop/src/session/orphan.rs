//! A session that runs with no state: a history row still `active` whose
//! tmux session is live and whose session dir lies in this state tree, while
//! `session-state.json` is absent (deleted by hand, or lost by an older
//! `doctor --fix` killed mid-repair). `study` refuses to start beside it (a
//! second harness would run and the first one's notes would never be
//! recorded) and `doctor --fix` rebuilds the state from it.

use crate::settings::SessionPaths;
use crate::store::{Store, StudySessionRow};
use crate::tmux::Tmux;

use super::SessionError;

/// The newest `active` row of `db` whose tmux session is live and whose
/// session dir is in `session`'s tree; `None` when there is none.
pub fn live_orphan(
    db: &std::path::Path,
    session: &SessionPaths,
    tmux: &Tmux,
) -> Result<Option<StudySessionRow>, SessionError> {
    let Some(store) = Store::open_read_only(db)? else {
        return Ok(None);
    };
    let root = session.sessions_root();
    for row in store.active_study_sessions()? {
        let Some(name) = row.tmux_session.as_deref() else {
            continue;
        };
        if root.join(name).is_dir() && tmux.has_session(name)? {
            return Ok(Some(row));
        }
    }
    Ok(None)
}
