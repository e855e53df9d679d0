//! Runs one consented phase: the one argv, no shell, in the drill's attempt
//! directory, with an environment built from nothing (scratch HOME and
//! TMPDIR, `/usr/bin:/bin` plus the resolved prerequisites' directories,
//! `STUDYLOOP_MODULE_ID`, `STUDYLOOP_DRILL_ID`, `STUDYLOOP_ATTEMPT_ID`).
//! Output (stdout and stderr, one pipe) is capped and redacted. The phase
//! runs contained (`sandbox`): nothing outside its attempt is writable, and
//! its own PID namespace ends with it — at its exit, its timeout, the
//! attempt's disk bound (`usage`) or the CLI's death — so no process
//! survives a phase.
//!
//! Attempts: `setup` opens a fresh attempt; `check` uses the open one (or
//! opens one); `cleanup` closes it whatever its exit: the attempt directory,
//! the scratch HOME and the kept output go with it.

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::drill::Plan;
use super::error::{ModuleError, io};
use super::sandbox::{self, Network, Report, Sandbox};
use super::usage::{self, Usage};
use crate::fsutil;

/// The most output bytes kept from a phase (the rest is read and dropped).
pub(crate) const MAX_OUTPUT: usize = 64 * 1024;
/// The marker every process of an attempt carries.
pub(crate) const ATTEMPT_VAR: &str = "STUDYLOOP_ATTEMPT_ID";

/// An attempt of one drill.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    /// The attempt id (a uuid).
    pub(crate) id: String,
    /// Its directory (`home/`, `tmp/`, `work/`, `<phase>.log`).
    pub(crate) dir: PathBuf,
}

/// How a phase ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The exit code, when it exited (not killed by a signal or the timeout).
    pub(crate) code: Option<i32>,
    /// Whether the timeout killed it.
    pub(crate) timed_out: bool,
    /// What the attempt held when the runner ended the phase at the disk
    /// bound (`usage`); `None` when it did not.
    pub(crate) over_disk: Option<Usage>,
    /// Capped, redacted output.
    pub(crate) output: String,
    /// Whether output was dropped past [`MAX_OUTPUT`].
    pub(crate) truncated: bool,
    /// How many leftover processes were stopped after the phase (unknown
    /// when the timeout killed the whole namespace at once).
    pub(crate) stopped: Option<usize>,
}

/// Opens (setup, or none open) or reuses (check, cleanup) the attempt of
/// `plan`'s drill under `modules_dir/attempts/<module>_<deck>_<task>` (slugs
/// never hold `_`, so the name is unambiguous).
pub(crate) fn attempt(modules_dir: &Path, plan: &Plan) -> Result<Attempt, ModuleError> {
    // Canonical, as the script's path is (`drill::plan`): the phase's HOME, TMPDIR
    // and cwd must name paths that exist inside its view.
    let dir = modules_dir
        .canonicalize()
        .map_err(io("cannot resolve", modules_dir))?
        .join("attempts")
        .join(plan.drill.replace('/', "_"));
    let id_file = dir.join("attempt-id");
    let open = studyloop_regular_file::read_regular(&id_file, 64)
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    if let Some(id) = open.filter(|_| plan.phase != "setup") {
        return Ok(Attempt {
            id: id.trim().to_owned(),
            dir,
        });
    }
    if dir.exists() {
        close(&Attempt {
            id: String::new(),
            dir: dir.clone(),
        })?;
    }
    for sub in sandbox::ATTEMPT_DIRS {
        fsutil::ensure_private_dir(&dir.join(sub)).map_err(io("cannot create", &dir))?;
    }
    let id = crate::ids::uuid_v4();
    fsutil::atomic_write(&id_file, id.as_bytes(), 0o600).map_err(io("cannot write", &id_file))?;
    Ok(Attempt { id, dir })
}

/// Closes an attempt: its directory goes (kept output included). A phase
/// may have locked its own directories (mode 000, read-only): each is opened
/// to its owner again first, never through a symlink, never outside the
/// attempt, so the attempt closes whatever the phase left.
pub(crate) fn close(a: &Attempt) -> Result<(), ModuleError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut dirs = vec![a.dir.clone()];
    while let Some(d) = dirs.pop() {
        let locked = std::fs::symlink_metadata(&d)
            .is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o700 != 0o700);
        if locked {
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
        }
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(e.path());
            }
        }
    }
    std::fs::remove_dir_all(&a.dir).map_err(io("cannot remove", &a.dir))
}

/// The phase's environment, built from nothing.
pub(crate) fn environment(plan: &Plan, a: &Attempt) -> Vec<(String, String)> {
    let mut path: Vec<String> = Vec::new();
    for (_, bin) in &plan.prerequisites {
        if let Some(dir) = bin.parent() {
            let d = dir.display().to_string();
            if !path.contains(&d) {
                path.push(d);
            }
        }
    }
    path.extend(["/usr/bin".to_owned(), "/bin".to_owned()]);
    vec![
        ("HOME".into(), a.dir.join("home").display().to_string()),
        ("TMPDIR".into(), a.dir.join("tmp").display().to_string()),
        ("PATH".into(), path.join(":")),
        ("LANG".into(), "C.UTF-8".into()),
        ("STUDYLOOP_MODULE_ID".into(), plan.module.clone()),
        ("STUDYLOOP_DRILL_ID".into(), plan.drill.clone()),
        (ATTEMPT_VAR.into(), a.id.clone()),
    ]
}

/// Runs the phase contained (`sandbox`: nothing outside the attempt is
/// writable, no process outlives the phase) and collects its output.
pub(crate) fn run(plan: &Plan, a: &Attempt) -> Result<Outcome, ModuleError> {
    let bins: Vec<PathBuf> = plan.prerequisites.iter().map(|(_, b)| b.clone()).collect();
    sandbox::hand_over(&a.dir)?;
    let (jail, report) = Sandbox::new(
        &a.dir,
        Path::new(&plan.argv[0]),
        &bins,
        network(plan),
        &plan.hidden,
    )
    .map_err(|source| spawn_error(plan, source))?;
    let (reader, writer) = std::io::pipe().map_err(|source| spawn_error(plan, source))?;
    let writer2 = writer
        .try_clone()
        .map_err(|source| spawn_error(plan, source))?;
    let mut cmd = Command::new(&plan.argv[0]);
    cmd.args(&plan.argv[1..])
        .env_clear()
        .envs(environment(plan, a))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2)
        .process_group(0);
    jail.install(&mut cmd);
    let watch = usage::Watch::start(
        sandbox::ATTEMPT_DIRS
            .iter()
            .map(|d| a.dir.join(d))
            .collect(),
    );
    let spawned = cmd.spawn();
    // The report pipe's write end lives in the command's hook: drop it so
    // the read end sees the end once the init is gone.
    drop(cmd);
    let mut child = match spawned {
        Ok(c) => c,
        Err(source) => {
            return Err(match sandbox::read_report(&report) {
                Some(Report::Refused { step, errno }) => ModuleError::Contain {
                    step: sandbox::step(step),
                    source: std::io::Error::from_raw_os_error(errno),
                },
                _ => spawn_error(plan, source),
            });
        }
    };
    let kept = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), false)));
    let (done_tx, done) = std::sync::mpsc::channel();
    let sink = std::sync::Arc::clone(&kept);
    std::thread::spawn(move || {
        collect(reader, &sink);
        let _ = done_tx.send(());
    });
    let deadline = Instant::now() + Duration::from_secs(plan.timeout_seconds);
    let mut next_measure = Instant::now();
    let mut over_disk = None;
    // Killing the outer process kills the namespace's init, and the kernel
    // then kills every process in the namespace.
    let timed_out = loop {
        match child.try_wait() {
            Ok(Some(_)) => break false,
            Ok(None) if Instant::now() >= deadline => {
                stop(&mut child);
                break true;
            }
            Ok(None) => {
                if Instant::now() >= next_measure {
                    let u = watch.measure();
                    if u.over() {
                        stop(&mut child);
                        over_disk = Some(u);
                        break false;
                    }
                    next_measure = Instant::now() + usage::EVERY;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(source) => return Err(spawn_error(plan, source)),
        }
    };
    let (code, stopped) = match sandbox::read_report(&report) {
        Some(Report::Ended { code, stopped, .. }) if !timed_out && over_disk.is_none() => {
            (code, Some(stopped as usize))
        }
        _ => (None, None),
    };
    // Every writer was in the namespace, now gone; the wait is bounded anyway.
    let drained = done.recv_timeout(Duration::from_secs(2)).is_ok();
    let (raw, mut truncated) = kept.lock().map(|k| k.clone()).unwrap_or_default();
    truncated |= !drained;
    let output = redact(&String::from_utf8_lossy(&raw));
    let log = a.dir.join(format!("{}.log", plan.phase));
    let _ = fsutil::atomic_write(&log, output.as_bytes(), 0o600);
    Ok(Outcome {
        code,
        timed_out,
        over_disk,
        output,
        truncated,
        stopped,
    })
}

/// Ends a phase at its timeout and returns once its namespace is empty
/// (bounded): the namespace's init — the contained child's only child by
/// then — is killed, the kernel kills everything in the namespace before the
/// init's exit completes, and the child, waiting for the init, exits after
/// it. Killing the child first would return while the namespace is still
/// being torn down (a busy phase takes seconds to die under load).
fn stop(child: &mut std::process::Child) {
    let pid = child.id();
    let init = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()
        .and_then(|c| c.split_whitespace().next()?.parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw);
    // The init cannot be reaped (its pid reused) while the child lives.
    if let Some(init) = init {
        let _ = rustix::process::kill_process(init, rustix::process::Signal::KILL);
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The network a phase gets (docs/drills.md#network-of-a-phase): a drill that
/// declares a prerequisite (docker, kind, kubectl: each talks to a daemon or
/// a cluster) or targets a cluster shares the machine's; every other drill is
/// offline by contract and gets only a loopback of its own.
pub(crate) fn network(plan: &Plan) -> Network {
    if plan.prerequisites.is_empty() && plan.target != "kubeconfig-context" {
        Network::LoopbackOnly
    } else {
        Network::Shared
    }
}

fn spawn_error(plan: &Plan, source: std::io::Error) -> ModuleError {
    ModuleError::Spawn {
        program: plan.argv[0].clone(),
        source,
    }
}

/// Reads everything, keeps the first [`MAX_OUTPUT`] bytes in `kept` (and
/// whether more came).
fn collect(mut reader: std::io::PipeReader, kept: &std::sync::Mutex<(Vec<u8>, bool)>) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let Ok(mut k) = kept.lock() else { break };
                let room = MAX_OUTPUT - k.0.len();
                k.0.extend_from_slice(&buf[..n.min(room)]);
                k.1 |= n > room;
            }
        }
    }
}

/// The phase output with every secret pattern replaced (the shipped rules).
fn redact(text: &str) -> String {
    match studyloop_redaction::RedactionRules::load_default() {
        Ok(rules) => studyloop_redaction::Redactor::new(&rules).redact(text),
        // Never show unredacted output: say so instead.
        Err(e) => format!("[output withheld: the redaction rules did not load: {e}]"),
    }
}
