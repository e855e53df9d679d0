//! The containment of one phase: [`Sandbox`] prepared before `fork`, the
//! init and script it runs after, and the [`Report`] its init writes back.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::prepare::{self, Ids};

use super::sys::{self, count_others, wait_for, write_all, write_file};
use crate::modules::error::ModuleError;

/// `close_range`'s flag: mark close-on-exec instead of closing.
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
/// The most processes the phase may have at once (a fork bomb stops here).
pub(crate) const MAX_PROCESSES: u64 = 256;
/// The largest file the phase may write.
pub(crate) const MAX_FILE_BYTES: u64 = 256 << 20;
/// The phase's nice value (the lowest priority; it cannot raise it).
pub(crate) const PHASE_NICE: libc::c_int = 19;
/// The attempt's directories the phase may write (the rest of the attempt —
/// its id, the kept output — it sees read-only at most).
pub(crate) const ATTEMPT_DIRS: [&str; 3] = ["home", "tmp", "work"];

/// What each step does, for the refusal (`could not <step>`); the index is
/// what the failing child reports.
pub(super) const STEPS: [&str; 16] = [
    "create the phase's user, mount, PID (and network) namespaces (a user namespace is needed)",
    "map the user and group ids into the user namespace",
    "start the namespace's first process",
    "make the mount tree private",
    "take the attempt directory, snapshot and device nodes aside",
    "make the whole filesystem read-only (mount_setattr, Linux 5.12 or later)",
    "mount a private /proc",
    "hide /tmp, /run, the home directory and what uid 65534 may not pass behind empty tmpfs",
    "build a private /dev",
    "bind the attempt directory, snapshot and prerequisites back",
    "drop every privilege (capabilities, no_new_privs, limits)",
    "enter the attempt's work directory",
    "become uid/gid 65534 (a root user's phase never runs as root)",
    "bring up the loopback interface of the phase's own network namespace",
    "give the attempt's home, tmp and work to uid/gid 65534 (a root user's phase never runs as root, so the user namespace must map uid 65534)",
    "mark every inherited descriptor above 2 close-on-exec (close_range, Linux 5.11 or later)",
];
pub(super) const DEVICES: [&CStr; 5] = [
    c"/dev/null",
    c"/dev/zero",
    c"/dev/full",
    c"/dev/random",
    c"/dev/urandom",
];

/// The network a phase gets (docs/drills.md#network-of-a-phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Network {
    /// The caller's network namespace (a drill with a network prerequisite).
    Shared,
    /// A network namespace of its own with only loopback up: nothing of the
    /// machine's loopback services or abstract Unix sockets is reachable.
    LoopbackOnly,
}

/// A path the phase needs, bound back after the hiding.
pub(super) struct Keep {
    pub(super) path: CString,
    pub(super) writable: bool,
    /// Directories to create first, outermost first.
    pub(super) parents: Vec<CString>,
}

/// The containment of one phase, prepared before `fork`.
pub(crate) struct Sandbox {
    pub(super) uid_map: Vec<u8>,
    pub(super) gid_map: Vec<u8>,
    pub(super) ids: Ids,
    pub(super) network: Network,
    pub(super) tmpfs_options: CString,
    pub(super) parent: libc::pid_t,
    pub(super) keep: Vec<Keep>,
    pub(super) hide: Vec<CString>,
    pub(super) work: CString,
    pub(super) report: OwnedFd,
    /// The caller's environment block (`/proc/self/stat` env_start..env_end,
    /// the same addresses in the forked child), which the init wipes: the
    /// init is never exec'd, so without this it would hold the caller's
    /// whole environment for `/proc/1/environ`.
    pub(super) env_block: Option<(usize, usize)>,
}

/// How the contained phase ended, as its init reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// Setup step `step` failed with `errno`; the script never ran.
    Refused { step: usize, errno: i32 },
    /// The script exited (`code`) or was killed (`signal`), and `stopped`
    /// processes were left and killed.
    Ended {
        code: Option<i32>,
        signal: Option<i32>,
        stopped: u32,
    },
}

fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

impl Sandbox {
    /// Prepares the containment of a phase working in `attempt` (its
    /// `home/`, `tmp/` and `work/` writable, `work/` the cwd) that runs
    /// `script` (in the snapshot) with the prerequisites in `bins`, on
    /// `network`, with the directories in `hidden` hidden too. Returns the sandbox and the read end of its report pipe.
    pub(crate) fn new(
        attempt: &Path,
        script: &Path,
        bins: &[PathBuf],
        network: Network,
        hidden: &[PathBuf],
    ) -> io::Result<(Self, OwnedFd)> {
        let attempt = attempt.canonicalize()?;
        let ids = Ids::of_caller();
        let writable: Vec<PathBuf> = ATTEMPT_DIRS.iter().map(|d| attempt.join(d)).collect();
        // Bound writable by path: a symlink in place of one (an attempt left
        // by an older StudyLoop, whose phases could write the attempt itself)
        // would bind its target writable.
        for d in &writable {
            if !std::fs::symlink_metadata(d)?.is_dir() {
                return Err(io::Error::other(format!(
                    "{} is not a directory (a symlink?); run the drill's setup for a fresh attempt",
                    d.display()
                )));
            }
        }
        // The snapshot root: the script's directory's parent (`scripts/`'s).
        let snapshot = script
            .canonicalize()?
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .ok_or_else(|| io::Error::other("the script has no snapshot directory"))?;
        let mut keep: Vec<(PathBuf, bool)> = writable.into_iter().map(|d| (d, true)).collect();
        keep.push((snapshot, false));
        for b in bins {
            if let Some(dir) = b
                .canonicalize()
                .ok()
                .and_then(|b| b.parent().map(Path::to_path_buf))
                .filter(|d| !keep.iter().any(|(k, _)| k == d))
            {
                keep.push((dir, false));
            }
        }
        let mut private = prepare::private_dirs();
        private.extend(hidden.iter().filter_map(|h| h.canonicalize().ok()));
        let view = prepare::view(&keep, &ids, private)?;
        let kept = view
            .keep
            .iter()
            .map(|k| {
                Ok(Keep {
                    path: cstring(&k.path)?,
                    writable: k.writable,
                    parents: k
                        .parents
                        .iter()
                        .map(|p| cstring(p))
                        .collect::<io::Result<_>>()?,
                })
            })
            .collect::<io::Result<_>>()?;
        let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        rustix::fs::fcntl_setfl(&r, rustix::fs::OFlags::NONBLOCK)?;
        let (uid, gid) = (ids.uid, ids.gid);
        Ok((
            Self {
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
                ids,
                network,
                tmpfs_options: CString::new(format!("size=64k,mode=0755,uid={uid},gid={gid}"))
                    .map_err(io::Error::other)?,
                parent: std::process::id() as libc::pid_t,
                keep: kept,
                hide: view
                    .hide
                    .iter()
                    .map(|h| cstring(h))
                    .collect::<io::Result<_>>()?,
                work: cstring(&attempt.join("work"))?,
                report: w,
                env_block: sys::env_block(),
            },
            r,
        ))
    }

    /// Makes `cmd` run contained. The command must not set a cwd (the work
    /// directory is entered inside the namespaces).
    pub(crate) fn install(self, cmd: &mut Command) {
        // SAFETY: `enter` only makes raw system calls on data prepared above
        // (no allocation, no locks), as a child of a multi-threaded process must.
        unsafe {
            cmd.pre_exec(move || self.enter());
        }
    }

    pub(super) fn fail(&self, step: usize) -> io::Error {
        let err = io::Error::last_os_error();
        let errno = err.raw_os_error().unwrap_or(0);
        let mut rec = [0u8; 10];
        rec[0] = 1;
        rec[1] = step as u8;
        rec[2..6].copy_from_slice(&errno.to_le_bytes());
        write_all(self.report.as_raw_fd(), &rec);
        err
    }

    /// Runs in the forked child (C): namespaces, then the init (G, pid 1),
    /// which prepares the view and forks the script (S). Returns `Ok` only in
    /// S, which then execs.
    fn enter(&self) -> io::Result<()> {
        // SAFETY: raw system calls with valid pointers to prepared data.
        unsafe {
            // C dies with the CLI (a killed `studyloop drill` leaves nothing).
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != self.parent {
                libc::_exit(125);
            }
            let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
            if self.network == Network::LoopbackOnly {
                flags |= libc::CLONE_NEWNET;
            }
            if self.ids.from_root {
                self.unshare_from_root(flags)?;
            } else {
                if libc::unshare(flags) != 0 {
                    return Err(self.fail(0));
                }
                if !write_file(c"/proc/self/setgroups", b"deny")
                    || !write_file(c"/proc/self/uid_map", &self.uid_map)
                    || !write_file(c"/proc/self/gid_map", &self.gid_map)
                {
                    return Err(self.fail(1));
                }
            }
            // No process of the phase works in the caller's directory: a cwd
            // is reachable through /proc/<pid>/cwd under every tmpfs laid on
            // top of it later.
            if libc::chdir(c"/".as_ptr()) != 0 {
                return Err(self.fail(2));
            }
            // G's line to C: it sees the end of this pipe when C is gone.
            let mut life = [-1; 2];
            if libc::pipe2(life.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(self.fail(2));
            }
            match libc::fork() {
                -1 => return Err(self.fail(2)),
                0 => {
                    libc::close(life[1]);
                }
                g => {
                    // C: keep no descriptor (the spawn's error pipe, the
                    // report pipe) but its end of G's line, wait for the
                    // init, leave with it.
                    let keep = life[1] as u32;
                    libc::syscall(libc::SYS_close_range, 3u32, keep - 1, 0u32);
                    libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0u32);
                    let status = wait_for(g);
                    libc::_exit(if libc::WIFEXITED(status) {
                        libc::WEXITSTATUS(status)
                    } else {
                        125
                    });
                }
            }
            // G: pid 1 of the new PID namespace; dies with C.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The script cannot read its init (pid 1 in its /proc): not
            // dumpable, so /proc/1/environ, mem, fd, cwd and root need
            // CAP_SYS_PTRACE, which nothing in the phase holds; and G holds
            // no byte of the caller's environment block anyway (its copy is
            // wiped). The script's own exec makes it dumpable again.
            if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
                return Err(self.fail(2));
            }
            if let Some((start, end)) = self.env_block {
                sys::wipe(start, end);
            }
            // A session of its own is a scheduler autogroup of its own (where
            // the kernel groups by session): the whole phase then weighs as
            // one session against the learner's, not as one task per process.
            libc::setsid();
            if self.network == Network::LoopbackOnly && !sys::loopback_up() {
                return Err(self.fail(13));
            }
            self.build_view(life[0])?;
            self.drop_privileges()?;
            let s = libc::fork();
            if s == -1 {
                return Err(self.fail(2));
            }
            if s == 0 {
                // S: the script.
                if libc::chdir(self.work.as_ptr()) != 0 {
                    return Err(self.fail(11));
                }
                // Nothing `studyloop drill` inherited or opened reaches the
                // script: every descriptor above 2 closes at its exec (not
                // now: the spawn's error pipe must still report a failed
                // exec).
                if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) != 0 {
                    return Err(self.fail(15));
                }
                return Ok(());
            }
            self.init(s)
        }
    }

    /// C of a root caller: the namespaces, with the ids mapped to
    /// [`UNPRIVILEGED`] by a helper that stays outside (a process may map
    /// only its own id from inside; root's own would keep the phase exempt
    /// from `RLIMIT_NPROC`); then no supplementary group.
    unsafe fn unshare_from_root(&self, flags: libc::c_int) -> io::Result<()> {
        // SAFETY: raw system calls with valid pointers to prepared data.
        unsafe {
            let me = libc::open(
                c"/proc/self".as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            let mut go = [-1; 2];
            if me < 0 || libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(self.fail(1));
            }
            let helper = libc::fork();
            if helper == -1 {
                return Err(self.fail(1));
            }
            if helper == 0 {
                libc::close(go[1]);
                sys::map_from_outside(me, go[0], &self.uid_map, &self.gid_map);
            }
            libc::close(go[0]);
            libc::close(me);
            if libc::unshare(flags) != 0 {
                let err = self.fail(0);
                libc::close(go[1]);
                wait_for(helper);
                return Err(err);
            }
            let ready = libc::write(go[1], b"1".as_ptr().cast(), 1) == 1;
            libc::close(go[1]);
            let status = wait_for(helper);
            if !ready || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                *libc::__errno_location() = if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else {
                    libc::EPERM
                };
                return Err(self.fail(1));
            }
            // No supplementary group (root's 0 would open group-0 files).
            if libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()) != 0 {
                return Err(self.fail(12));
            }
            Ok(())
        }
    }

    /// G after the script started: reap until the script ends, count and
    /// kill what is left, report, exit (the namespace goes with it).
    unsafe fn init(&self, script: libc::pid_t) -> ! {
        // SAFETY: raw system calls with valid pointers.
        unsafe {
            let report = self.report.as_raw_fd();
            libc::syscall(libc::SYS_close_range, 0u32, (report - 1) as u32, 0u32);
            libc::syscall(libc::SYS_close_range, (report + 1) as u32, u32::MAX, 0u32);
            let mut status = 0;
            loop {
                let r = libc::waitpid(-1, &mut status, 0);
                if r == script || (r == -1 && *libc::__errno_location() != libc::EINTR) {
                    break;
                }
            }
            let stopped = count_others();
            libc::kill(-1, libc::SIGKILL);
            while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 {}
            let mut rec = [0u8; 10];
            rec[0] = 2;
            let (kind, value) = if libc::WIFEXITED(status) {
                (0u8, libc::WEXITSTATUS(status))
            } else {
                (1u8, libc::WTERMSIG(status))
            };
            rec[1] = kind;
            rec[2..6].copy_from_slice(&value.to_le_bytes());
            rec[6..10].copy_from_slice(&stopped.to_le_bytes());
            write_all(report, &rec);
            libc::_exit(0)
        }
    }
}

/// Gives the attempt's writable directories to the ids the phase runs as
/// (root's phase: uid/gid 65534; any other user's: already theirs). Files
/// the phase writes there keep its ids until the attempt closes.
pub(crate) fn hand_over(attempt: &Path) -> Result<(), ModuleError> {
    let dirs: Vec<PathBuf> = ATTEMPT_DIRS.iter().map(|d| attempt.join(d)).collect();
    prepare::hand_over(&dirs).map_err(|source| ModuleError::Contain {
        step: step(14),
        source,
    })
}

/// Reads the report after the contained phase ended (or failed to start).
pub(crate) fn read_report(r: &OwnedFd) -> Option<Report> {
    let mut rec = [0u8; 10];
    let n = rustix::io::read(r, &mut rec).ok()?;
    if n < rec.len() {
        return None;
    }
    let int = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    match (rec[0], rec[1]) {
        (1, step) => Some(Report::Refused {
            step: usize::from(step),
            errno: int(&rec[2..6]),
        }),
        (2, kind) => Some(Report::Ended {
            code: (kind == 0).then(|| int(&rec[2..6])),
            signal: (kind == 1).then(|| int(&rec[2..6])),
            stopped: u32::from_le_bytes([rec[6], rec[7], rec[8], rec[9]]),
        }),
        _ => None,
    }
}

/// The refusal's step text.
pub(crate) fn step(i: usize) -> &'static str {
    STEPS.get(i).copied().unwrap_or("contain the phase")
}
