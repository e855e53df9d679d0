//! Running `studyloop-stub-provider` as a child process from a test or a lane:
//! start it on a free loopback port, wait for its port file, read its request
//! log, and stop it (SIGTERM, then SIGKILL) when done or dropped.
//!
//! The caller supplies the binary path (finding it is the caller's business) and
//! a private directory for the port file, the log and the child's output; or,
//! with [`StubProvider::spawn_command`], the whole command (a scratch world's,
//! with its environment), so the child carries that world's markers.
//!
//! The child always gets its own process group. In the caller's group, a
//! Ctrl-C at the terminal (SIGINT to the whole foreground group) killed the
//! stub while the runner, which treats SIGINT as "finish cleanly", kept its
//! harness retrying against a dead port for the full probe timeout; the stub
//! must live until its owner stops it, after the harness.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::log::{LogRecord, RequestLog};

/// How long the child may take to write its port file.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the child may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the stub provider did not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The binary could not be executed.
    #[error("cannot run {binary}: {source} (build it with `cargo build --bins`)")]
    Exec {
        /// The binary path.
        binary: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The work directory is unusable.
    #[error("cannot prepare the stub provider's directory {dir}: {source}")]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The child exited or never reported a port.
    #[error("studyloop-stub-provider did not start: {detail}; its stderr: {stderr}")]
    Start {
        /// What happened.
        detail: String,
        /// The child's stderr so far.
        stderr: String,
    },
}

/// How often an own-group stub checks that its parent still runs.
const ORPHAN_POLL: Duration = Duration::from_millis(250);

/// Exits this process once its parent is gone (it was re-parented). A stub
/// in its own process group no longer dies with its owner's group on a
/// Ctrl-C, so when the owner dies without stopping it (SIGKILL, or a test
/// killed by a SIGINT it does not handle) nothing else would. The stub
/// binaries call this first.
pub fn exit_when_orphaned() {
    let Some(parent) = rustix::process::getppid() else {
        return;
    };
    let watch = move || {
        loop {
            std::thread::sleep(ORPHAN_POLL);
            if rustix::process::getppid() != Some(parent) {
                std::process::exit(0);
            }
        }
    };
    // Without the thread the stub still works; it just outlives a killed owner.
    let _ = std::thread::Builder::new()
        .name("orphan-watch".into())
        .spawn(watch);
}

/// A running stub provider child.
#[derive(Debug)]
pub struct StubProvider {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl StubProvider {
    /// Starts `binary` with `args` (plus `--port 0 --port-file <dir>/port --log
    /// <dir>/requests.jsonl`) and waits until it listens.
    pub fn spawn<I, S>(binary: &Path, dir: &Path, args: I) -> Result<Self, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self::spawn_command(Command::new(binary), dir, args)
    }

    /// As [`StubProvider::spawn`], from a prepared `command` (program,
    /// environment, working directory); the stub's own arguments are appended.
    pub fn spawn_command<I, S>(
        mut command: Command,
        dir: &Path,
        args: I,
    ) -> Result<Self, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let binary = PathBuf::from(command.get_program());
        let dir_err = |source| SpawnError::Dir {
            dir: dir.to_owned(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(dir_err)?;
        let port_file = dir.join("port");
        let stdout = File::create(dir.join("stdout.txt")).map_err(dir_err)?;
        let stderr = File::create(dir.join("stderr.txt")).map_err(dir_err)?;
        let child = command
            .process_group(0)
            .arg("--port")
            .arg("0")
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(dir.join("requests.jsonl"))
            .args(args.into_iter().map(Into::into))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .map_err(|source| SpawnError::Exec {
                binary: binary.clone(),
                source,
            })?;
        let mut stub = Self {
            child: Some(child),
            port: 0,
            dir: dir.to_owned(),
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                stub.port = port;
                return Ok(stub);
            }
            let exited = stub
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            let detail = match exited {
                Some(status) => format!("it exited with {status}"),
                None if Instant::now() >= deadline => {
                    format!("no port file within {START_TIMEOUT:?}")
                }
                None => {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            stub.stop();
            let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
            return Err(SpawnError::Start {
                detail,
                stderr: stderr.trim().to_owned(),
            });
        }
    }

    /// The child's pid, which is also its process group id; `None` once stopped.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The request log's path.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("requests.jsonl")
    }

    /// Every request logged so far.
    pub fn records(&self) -> std::io::Result<Vec<LogRecord>> {
        let path = self.log_path();
        if !path.exists() {
            return Ok(Vec::new());
        }
        RequestLog::read_all(&path)
    }

    /// Stops the child: SIGTERM, then SIGKILL after a grace period. Returns its
    /// exit status when it could be collected. Safe to call twice.
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        let pid = rustix::process::Pid::from_child(&child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            match child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        let _ = child.kill();
        child.wait().ok()
    }
}

impl Drop for StubProvider {
    fn drop(&mut self) {
        self.stop();
    }
}
