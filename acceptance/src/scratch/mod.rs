//! The scratch world: a disposable HOME, XDG tree, state dir, seeded config and
//! private tmux socket dir for one trial, the exact environment its children
//! get, the process groups it started, and its guarded removal.
//!
//! Layout under one root (`/tmp/sl-acc-XXXXXX`, 0700):
//! `home/` (with `.config`, `.local/share`, `.local/state`, `.cache`),
//! `home/.config/studyloop/config.yaml` (seeded), the state dir
//! `home/.local/share/studyloop`, the sentinel
//! `home/.studyloop-acceptance-sentinel` (32 hex), `tmp/` (the child's
//! `TMPDIR`) and the short tmux socket dir `t/`. The root lives directly under
//! `/tmp` so `t/tmux-<uid>/default` stays far below the 104-byte `sun_path`
//! limit. `owner` (in the root) records the owning process (pid, start time,
//! pid namespace, token): `reaper` stops and sweeps worlds whose owner died
//! unswept (a SIGKILLed runner) at the next run or `just clean-scratch`.
//! Deletion is the `sweep` module's job.

mod env;
pub mod grok_trust;
mod groups;
mod layout;
pub mod leftovers;
mod owner;
mod reaper;
pub mod registry;
mod world;

// The deny rules live in one crate shared with the product's child_env.
pub use env::{Env, EnvError, TestHatch, find_on_path};
pub use reaper::{ReapReport, describe as describe_reap, reap_orphans};
pub use studyloop_credentials::{EXACT_DENY, is_denied, looks_like_credential};
pub use world::{CONFIG_SEED, SENTINEL_NAME, SOCKET_PATH_LIMIT, Scratch, ScratchError};
