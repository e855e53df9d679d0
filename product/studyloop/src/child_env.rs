//! The environment a harness child gets. Two operations, one place:
//!
//! - [`strip_hatches`]: always applied: the test hatches
//!   (`STUDYLOOP_TEST_AGENT_CMD`, `STUDYLOOP_TEST_ACP_CMD`, `STUDYLOOP_TEST_KILL_AT`)
//!   never reach a child.
//! - [`scrub`]: the credential deny-list of reference §4.1, applied to web PTY
//!   and ACP children and, when asked with `--scrub-env`, to the tmux pane.
//!
//! It is a deny-list (everything else passes unchanged), not an allow-list.
//! The rules themselves live in the `studyloop-credentials` crate, shared with
//! the acceptance tier's scratch env (which must not link the product), with
//! their must-keep / must-drop table tests.

use std::ffi::OsStr;

use crate::env::{self, Env};

/// Whether a variable named `name` must never reach a harness child: the one
/// shared rule table (`studyloop-credentials`).
pub use studyloop_credentials::is_denied;

fn denied_os(name: &OsStr) -> bool {
    is_denied(&name.to_string_lossy())
}

/// Remove the test hatches (always done for every child).
pub fn strip_hatches(env: &mut Env) {
    env.remove(env::STUDYLOOP_TEST_AGENT_CMD);
    env.remove(env::STUDYLOOP_TEST_ACP_CMD);
    env.remove(env::STUDYLOOP_TEST_KILL_AT);
}

/// A copy of `caller` without any denied variable (reference `build_child_env`).
pub fn scrub(caller: &Env) -> Env {
    let mut out = caller.clone();
    out.retain(|k| !denied_os(k));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_and_strip() {
        let caller = Env::from_pairs([
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk"),
            ("STUDYLOOP_TEST_AGENT_CMD", "x"),
        ]);
        let scrubbed = scrub(&caller);
        assert_eq!(scrubbed, Env::from_pairs([("PATH", "/bin")]));
        let mut e = caller.clone();
        strip_hatches(&mut e);
        assert_eq!(
            e,
            Env::from_pairs([("PATH", "/bin"), ("OPENAI_API_KEY", "sk")])
        );
    }
}
