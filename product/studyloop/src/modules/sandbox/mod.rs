//! Containment of a phase script (docs/drills.md#containment-of-a-phase): the phase
//! runs in its own user, mount and PID namespaces (and, for an offline drill,
//! a network namespace with only loopback), so that as a class
//!
//! - it cannot write outside its attempt: the whole mount tree is read-only
//!   (`mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)`) except binds of the
//!   attempt's `home/`, `tmp/` and `work/` (its scratch HOME, TMPDIR and work
//!   dir); `/proc` is a fresh, read-only mount of the phase's own PID
//!   namespace (no `/proc/<outside pid>/root` door), `/dev` a private
//!   read-only tmpfs with only null, zero, full, random and urandom, and
//!   `/tmp`, `/var/tmp`, `/run` and the user's home are empty read-only tmpfs
//!   (no socket of a server outside — tmux, D-Bus — can be reached through
//!   them); what the phase needs from under them (the attempt, the snapshot,
//!   the prerequisites) is bound back;
//! - no process it starts survives it: the script runs as pid 2 under a tiny
//!   init (pid 1, this code, never exec'd) that, when the script exits, counts
//!   and SIGKILLs everything left in the namespace; if the init dies (the
//!   timeout or the CLI being killed) the kernel kills the whole namespace —
//!   `setsid`, double forks and cleared environments do not leave it;
//! - it holds no privilege: every capability dropped (bounding set included),
//!   `no_new_privs`, at most [`MAX_PROCESSES`] processes (root's phase runs
//!   as uid 65534: the kernel exempts real uid 0 from that limit, `prepare`),
//!   files of at most [`MAX_FILE_BYTES`] (the attempt's total: `usage`),
//!   nice [`PHASE_NICE`] in a session of its own; its environment is the
//!   runner's, built from nothing;
//! - it cannot read the learner through its own parents: the init is not
//!   dumpable (no `/proc/1/environ`, `mem`, `fd`, `cwd`, `root` without
//!   `CAP_SYS_PTRACE`) and wipes its copy of the caller's environment block,
//!   C and the init work in `/`, the caller's working directory and the
//!   outermost dot-directory holding it are hidden like the home, and every
//!   descriptor above 2 closes at the script's exec (the init keeps only its
//!   report pipe).
//!
//! `harness` is the same mechanism for a study session's harness
//! (`studyloop contain`), without the view;
//! `contain` holds the [`Sandbox`] and its init; `prepare` decides the ids
//! and the view before `fork`; `view` builds the
//! view and drops the privileges; `sys` holds the raw system calls.
//!
//! Where the kernel refuses a step (no unprivileged user namespaces, no
//! `mount_setattr`), the phase is refused with the step named and nothing
//! runs: never uncontained.
//!
//! Everything between `fork` and `exec` runs in a child of a multi-threaded
//! process, so it only makes raw system calls on data prepared beforehand (no
//! allocation, no locks).

#[cfg(test)]
pub(crate) use contain::MAX_PROCESSES;
pub(crate) use contain::{ATTEMPT_DIRS, Network, Report, Sandbox, hand_over, read_report, step};
#[cfg(test)]
pub(crate) use prepare::UNPRIVILEGED;

mod contain;
pub(crate) mod harness;
mod prepare;
mod sys;
mod view;
