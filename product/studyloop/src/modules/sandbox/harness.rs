//! `studyloop contain -- ARGV`: the one containment of a study session's
//! harness, used by every launch path (the tmux pane, the web PTY shell, the
//! web ACP agent; docs/security-hardening.md#one-containment-for-every-launch-path).
//!
//! The same mechanism as a drill phase ([`super`]), without its view: the
//! harness runs as pid 2 under an init (pid 1) in a PID namespace of its own
//! with a private `/proc` (root: `CLONE_NEWPID | CLONE_NEWNS`; any other
//! user: with a user namespace mapping only the caller's own uid and gid, so
//! the harness keeps its identity and its files). Whatever the harness
//! starts — `setsid`, double forks, `env -i` — stays in the namespace, and
//! when the harness exits, the init kills everything left (`kill(-1)` inside
//! the namespace reaches nothing outside it); when the init dies (its parent
//! killed: `PR_SET_PDEATHSIG`), the kernel kills the rest.
//!
//! No new session or process group is made: the harness stays in the
//! terminal's foreground group (a TUI in a tmux pane or the web PTY keeps
//! its job control). SIGTERM, SIGINT and SIGHUP sent to this process or the
//! init are passed on to the harness (one the terminal sent to the whole
//! foreground group is not: the harness got its own).
//!
//! Where the kernel refuses the namespaces, the harness runs under a child
//! subreaper instead (`PR_SET_CHILD_SUBREAPER`), the reason printed on
//! stderr; when it exits, its recorded descendants (found by parentage) are
//! killed — never `kill(-1)`, which outside a namespace would reach the
//! caller's own processes.
//!
//! It runs as the first thing `main` does, single-threaded, so `fork` is safe.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt as _;

use super::sys::{wait_for, write_file};

/// The hidden CLI command's name (`studyloop contain -- ARGV`).
pub const CONTAIN_COMMAND: &str = "contain";
/// How long the harness has to exit after a SIGTERM before everything in its
/// namespace is killed.
const TERM_GRACE_MS: i64 = 3000;
/// Exit code when the containment itself fails (the harness never ran).
const FAILED: i32 = 125;
/// Exit code when the harness cannot be executed (as a shell does).
const NOT_FOUND: i32 = 127;
/// The signals passed on to the harness.
const FORWARDED: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The argv that runs `argv` contained, through `exe` (this program).
#[must_use]
pub fn contained_argv(exe: &std::path::Path, argv: &[String]) -> Vec<String> {
    let mut out = vec![
        exe.to_string_lossy().into_owned(),
        CONTAIN_COMMAND.to_owned(),
        "--".to_owned(),
    ];
    out.extend(argv.iter().cloned());
    out
}

/// Runs `studyloop contain` when `args` (the process's, program name first)
/// ask for it; `None` otherwise. Returns the exit code: the harness's (128 +
/// the signal when one killed it), or 125 when it could not be contained.
#[must_use]
pub fn dispatch(args: &[OsString]) -> Option<u8> {
    if args.get(1).map(OsString::as_os_str) != Some(CONTAIN_COMMAND.as_ref()) {
        return None;
    }
    let rest = match args.get(2) {
        Some(a) if a == "--" => &args[3..],
        _ => &args[2..],
    };
    let code = match rest
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(argv) if !argv.is_empty() => run(&argv),
        Ok(_) => {
            eprintln!(
                "studyloop contain: no command given; usage: studyloop contain -- PROGRAM [ARGS…]"
            );
            2
        }
        Err(_) => {
            eprintln!("studyloop contain: an argument holds a NUL byte; pass it without one");
            2
        }
    };
    Some(u8::try_from(code.clamp(0, 255)).unwrap_or(1))
}

/// Why the namespaces could not be made (for the fallback's notice).
fn refusal(step: &str) -> String {
    format!("{step}: {}", std::io::Error::last_os_error())
}

fn run(argv: &[CString]) -> i32 {
    // SAFETY: single-threaded (the first thing `main` does); raw system calls
    // with valid pointers.
    unsafe {
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let set = forwarded_set();
        // Blocked from here on and taken by `sigtimedwait` (no handler race);
        // the harness gets an empty mask back before its exec.
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        match unshare() {
            Ok(()) => namespaced(&ptrs, &set),
            Err(Refused::Broken(why)) => {
                eprintln!("studyloop contain: {why}; the harness was not started");
                FAILED
            }
            Err(Refused::Unsupported(why)) => {
                eprintln!(
                    "studyloop contain: no PID namespace for the harness ({why}); it runs under a subreaper instead, and what it leaves behind is found by parentage (docs/security-hardening.md#one-containment-for-every-launch-path)"
                );
                subreaped(&ptrs, &set)
            }
        }
    }
}

/// SIGCHLD and the forwarded signals, with handlers installed: pid 1 of a
/// namespace drops a signal whose handler is the default one.
unsafe fn forwarded_set() -> libc::sigset_t {
    extern "C" fn nothing(_: libc::c_int) {}
    // SAFETY: a zeroed sigset/sigaction are valid; valid pointers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = nothing as extern "C" fn(libc::c_int) as usize;
        for s in FORWARDED.into_iter().chain([libc::SIGCHLD]) {
            libc::sigaddset(&mut set, s);
            libc::sigaction(s, &act, std::ptr::null_mut());
        }
        set
    }
}

/// Why [`unshare`] made no usable namespaces.
enum Refused {
    /// The kernel refuses them (nothing changed): the subreaper fallback.
    Unsupported(String),
    /// They were made but cannot be used: this process must not go on.
    Broken(String),
}

/// The namespaces: as root a PID and mount namespace; as anyone else with a
/// user namespace mapping only the caller's own ids.
unsafe fn unshare() -> Result<(), Refused> {
    // SAFETY: raw system calls with valid pointers.
    unsafe {
        let (uid, gid) = (libc::getuid(), libc::getgid());
        let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if uid != 0 {
            flags |= libc::CLONE_NEWUSER;
        }
        if libc::unshare(flags) != 0 {
            return Err(Refused::Unsupported(refusal("unshare")));
        }
        if uid != 0
            && (!write_file(c"/proc/self/setgroups", b"deny")
                || !write_file(c"/proc/self/uid_map", format!("{uid} {uid} 1\n").as_bytes())
                || !write_file(c"/proc/self/gid_map", format!("{gid} {gid} 1\n").as_bytes()))
        {
            // The namespaces exist but the ids are unmapped: a fallback
            // would run the harness as nobody, so nothing runs.
            return Err(Refused::Broken(refusal(
                "map the caller's uid/gid into the user namespace",
            )));
        }
        Ok(())
    }
}

/// This process outside, the init (pid 1) and the harness (pid 2) inside.
unsafe fn namespaced(argv: &[*const libc::c_char], set: &libc::sigset_t) -> i32 {
    // SAFETY: raw system calls with valid pointers.
    unsafe {
        // The init's line to this process: EOF once this process is gone.
        let mut life = [-1; 2];
        if libc::pipe2(life.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            eprintln!("studyloop contain: {}", refusal("pipe"));
            return FAILED;
        }
        let init = libc::fork();
        if init == -1 {
            eprintln!(
                "studyloop contain: {}",
                refusal("fork the namespace's init")
            );
            return FAILED;
        }
        if init == 0 {
            libc::close(life[1]);
            libc::_exit(be_init(argv, set, life[0]));
        }
        libc::close(life[0]);
        // Outside: pass signals on to the init, leave with its code.
        supervise(init, set)
    }
}

/// pid 1: a private /proc, the harness as pid 2, then reap until it exits,
/// and kill everything left.
unsafe fn be_init(argv: &[*const libc::c_char], set: &libc::sigset_t, life: libc::c_int) -> i32 {
    // SAFETY: raw system calls with valid pointers.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // The parent may have died before the line above: its end is closed.
        let mut byte = 0u8;
        libc::fcntl(life, libc::F_SETFL, libc::O_NONBLOCK);
        if libc::read(life, (&raw mut byte).cast(), 1) == 0 {
            return FAILED;
        }
        // A /proc of this namespace (its pids, not the caller's): the mount
        // tree is made private first so the mount stays in this namespace.
        // A kernel that refuses it leaves the caller's /proc in view; the
        // containment (the namespace) holds either way.
        let private = libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) == 0;
        if !private
            || libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
        {
            eprintln!(
                "studyloop contain: {}; the harness sees the caller's /proc",
                refusal("mount a private /proc")
            );
        }
        let harness = spawn(argv, false);
        if harness == -1 {
            return FAILED;
        }
        let code = supervise(harness, set);
        // Everything left in the namespace (never anything outside it):
        // `kill(-1)` only from the namespace's init, which this process is
        // unless the kernel broke the promise of `unshare` — then by pid.
        if libc::getpid() == 1 {
            libc::kill(-1, libc::SIGKILL);
            while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 {}
        } else {
            kill_descendants();
        }
        code
    }
}

/// Forks the harness: an empty signal mask and default handlers, then exec.
unsafe fn spawn(argv: &[*const libc::c_char], die_with_parent: bool) -> libc::pid_t {
    // SAFETY: raw system calls with valid pointers; the child only execs.
    unsafe {
        let pid = libc::fork();
        if pid != 0 {
            if pid == -1 {
                eprintln!("studyloop contain: {}", refusal("fork the harness"));
            }
            return pid;
        }
        if die_with_parent {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        }
        for s in FORWARDED.into_iter().chain([libc::SIGCHLD]) {
            libc::signal(s, libc::SIG_DFL);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execvp(argv[0], argv.as_ptr());
        let program = std::ffi::CStr::from_ptr(argv[0]).to_string_lossy();
        eprintln!(
            "studyloop contain: cannot run {program}: {}",
            std::io::Error::last_os_error()
        );
        libc::_exit(NOT_FOUND)
    }
}

/// Waits for `child`, passing the forwarded signals on (and reaping every
/// other child: as a namespace's init or a subreaper this process inherits
/// orphans). A SIGTERM or SIGHUP gives `child` [`TERM_GRACE_MS`] before it
/// is killed.
/// Returns `child`'s exit code (128 + its signal).
unsafe fn supervise(child: libc::pid_t, set: &libc::sigset_t) -> i32 {
    // SAFETY: raw system calls with valid pointers.
    unsafe {
        let mut deadline: Option<i64> = None;
        loop {
            // Reap first: a SIGCHLD may have come before the wait.
            loop {
                let mut status = 0;
                let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if r == child {
                    return code_of(status);
                }
                if r <= 0 {
                    if r == -1 && *libc::__errno_location() == libc::ECHILD {
                        return code_of(wait_for(child));
                    }
                    break;
                }
            }
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let sig = match deadline {
                None => libc::sigwaitinfo(set, &mut info),
                Some(at) => {
                    let left = (at - now_ms()).max(0);
                    let ts = libc::timespec {
                        tv_sec: left / 1000,
                        tv_nsec: (left % 1000) * 1_000_000,
                    };
                    libc::sigtimedwait(set, &mut info, &ts)
                }
            };
            if sig == -1 {
                if deadline.is_some_and(|at| now_ms() >= at) {
                    libc::kill(child, libc::SIGKILL);
                    deadline = None;
                }
                continue;
            }
            if sig == libc::SIGCHLD {
                continue;
            }
            // One the terminal sent to the whole foreground group reached
            // the harness already.
            if info.si_code != libc::SI_KERNEL {
                libc::kill(child, sig);
            }
            // A hangup is the terminal gone (the pane or PTY closed): like a
            // SIGTERM, the harness gets the grace and then goes.
            if (sig == libc::SIGTERM || sig == libc::SIGHUP) && deadline.is_none() {
                deadline = Some(now_ms() + TERM_GRACE_MS);
            }
        }
    }
}

fn code_of(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        FAILED
    }
}

fn now_ms() -> i64 {
    // SAFETY: a valid pointer.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
        ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }
}

/// The fallback: this process a child subreaper, the harness its child; when
/// the harness exits, its descendants (every orphan it left is now this
/// process's child) are killed by pid, and reaped.
unsafe fn subreaped(argv: &[*const libc::c_char], set: &libc::sigset_t) -> i32 {
    // SAFETY: raw system calls with valid pointers.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) != 0 {
            eprintln!(
                "studyloop contain: {}; the harness runs uncontained",
                refusal("become a child subreaper")
            );
        }
        let harness = spawn(argv, true);
        if harness == -1 {
            return FAILED;
        }
        let code = supervise(harness, set);
        kill_descendants();
        code
    }
}

/// Kills this process's descendants by pid (never `kill(-1)`) and reaps
/// them. A descendant may fork while the others are killed: repeated until
/// none is left (bounded; each round kills the parents of the next).
unsafe fn kill_descendants() {
    // SAFETY: raw system calls.
    unsafe {
        for _ in 0..100 {
            let left = descendants(libc::getpid());
            if left.is_empty() {
                break;
            }
            for p in left {
                libc::kill(p, libc::SIGKILL);
            }
            while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
        }
        while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
    }
}

/// The live descendants of `root`, by the parent pids in /proc.
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(libc::pid_t, libc::pid_t)> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // Fields after the command name (which may hold spaces): state, ppid.
            let rest = &stat[stat.rfind(')')? + 2..];
            let mut f = rest.split_whitespace();
            let state = f.next()?;
            let ppid = f.next()?.parse().ok()?;
            (state != "Z").then_some((pid, ppid))
        })
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (child, _) in parents.iter().filter(|(_, pp)| *pp == p) {
            if !out.contains(child) {
                out.push(*child);
                frontier.push(*child);
            }
        }
    }
    out
}
