//! `Scratch`: creating, using and closing one scratch world.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::caller_env::CallerEnv;
use crate::command::{self, Finished, RunError};
use crate::scratch::env::{Env, Pointers};
use crate::scratch::grok_trust::GrokTrust;
use crate::scratch::groups::{self, Groups};
use crate::scratch::layout::Layout;
use crate::scratch::owner::{OWNER_NAME, Owner};
use crate::selection::AuthMode;
use crate::sweep::{self, SweepError, SweepTarget};

/// The sentinel file's name inside the scratch HOME.
pub const SENTINEL_NAME: &str = ".studyloop-acceptance-sentinel";
/// The seeded `config.yaml`: no topics, and a default memory scope, without
/// which `studyloop study` refuses to start ("No context scope configured").
pub const CONFIG_SEED: &str = "topics: []\nmemory:\n  default_scope: unclassified\n";
/// AF_UNIX `sun_path` limit on the strictest platform (macOS).
pub const SOCKET_PATH_LIMIT: usize = 104;
const CREATE_ATTEMPTS: usize = 16;

/// Why a scratch world could not be created. Nothing is left behind.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    /// A directory or file could not be created.
    #[error("failed to {action} {path}: {source} (is /tmp writable?)")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The tmux socket path would exceed the `sun_path` limit.
    #[error(
        "tmux socket path {path} is {len} bytes, over the {SOCKET_PATH_LIMIT}-byte sun_path limit (use a shorter /tmp)"
    )]
    SocketPathTooLong {
        /// The would-be socket path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
    },
    /// No free root name after several attempts.
    #[error("failed to find a free /tmp/sl-acc-XXXXXX name after {CREATE_ATTEMPTS} attempts")]
    NoFreeName,
}

/// One scratch world. Dropping it stops its tmux servers and process groups and
/// sweeps it; call [`Scratch::close`] to get a sweep failure as a value.
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
    home: PathBuf,
    config_dir: PathBuf,
    state_dir: PathBuf,
    tmp_dir: PathBuf,
    socket_dir: PathBuf,
    token: String,
    auth_mode: AuthMode,
    env: Env,
    caller: CallerEnv,
    groups: Groups,
    /// A real-auth grok cell's real trust file, cleaned of this world's entries on close.
    grok_trust: Option<GrokTrust>,
    swept: bool,
}

impl Scratch {
    /// A scrubbed scratch world whose `PATH`/locale come from this process.
    pub fn create() -> Result<Self, ScratchError> {
        Self::create_with(CallerEnv::capture(), AuthMode::Scrubbed)
    }

    /// A scratch world built from an explicit caller env. `RealAuth` gives the
    /// real-auth env; the other modes give the scrubbed allow-list env.
    pub fn create_with(caller: CallerEnv, auth_mode: AuthMode) -> Result<Self, ScratchError> {
        let root = make_root()?;
        match populate(&root, caller, auth_mode) {
            Ok(scratch) => Ok(scratch),
            Err((err, sentinel_token)) => {
                discard_partial(&root, sentinel_token.as_deref());
                Err(err)
            }
        }
    }

    /// The root (`/tmp/sl-acc-XXXXXX`).
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The scratch HOME.
    pub fn home(&self) -> &Path {
        &self.home
    }
    /// `home/.config/studyloop`, holding the seeded `config.yaml`.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }
    /// `home/.local/share/studyloop` (`STUDYLOOP_STATE_DIR`).
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }
    /// The child's `TMPDIR`, inside the root.
    pub fn tmp_dir(&self) -> &Path {
        &self.tmp_dir
    }
    /// The private tmux socket dir (`TMUX_TMPDIR`).
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }
    /// The sentinel file.
    pub fn sentinel_path(&self) -> PathBuf {
        self.home.join(SENTINEL_NAME)
    }
    /// The auth mode the env was built for.
    pub fn auth_mode(&self) -> AuthMode {
        self.auth_mode
    }
    /// The env every child of this world gets (a copy to extend with
    /// [`Env::with_var`] and friends).
    pub fn env(&self) -> Env {
        self.env.clone()
    }

    /// A command with this world's env (nothing else), cwd = scratch HOME, and
    /// its own process group. Start it with [`Scratch::spawn`] or
    /// [`Scratch::run`] so the group is tracked.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.env
            .apply(&mut cmd)
            .current_dir(&self.home)
            .process_group(0);
        cmd
    }

    /// Spawns `cmd` in its own process group and records the group, so
    /// closing the world stops it and everything it started.
    pub fn spawn(&self, cmd: &mut Command) -> std::io::Result<Child> {
        let child = cmd.process_group(0).spawn()?;
        self.groups.record(child.id());
        Ok(child)
    }

    /// Records the process group of a child another type started in its own
    /// group (the stub provider), so closing the world stops it too if its
    /// owner did not.
    pub(crate) fn adopt_group(&self, pgid: u32) {
        self.groups.record(pgid);
    }

    /// Runs `cmd` to completion within `timeout`, output captured, its group
    /// tracked (see [`command::run_bounded`]). A Ctrl-C to the runner
    /// ([`crate::interrupt`]) ends the wait within milliseconds: the group is
    /// killed and the error is [`RunError::Wait`] of kind `Interrupted`, so a
    /// trial step (a probe, provisioning) is cancelled, not waited out.
    pub fn run(&self, cmd: &mut Command, timeout: Duration) -> Result<Finished, RunError> {
        command::prepare(cmd);
        let program = command::program_name(cmd);
        let child = self.spawn(cmd).map_err(|source| RunError::Spawn {
            program: program.clone(),
            source,
        })?;
        command::wait_bounded_or_cancelled(child, &program, timeout, crate::interrupt::interrupted)
    }

    /// The process groups recorded so far.
    pub fn process_groups(&self) -> Vec<i32> {
        self.groups.snapshot()
    }

    /// Names the operator's real grok trust file, so close removes the entries the
    /// product pre-writes there for this world's session dirs (seed 003; see
    /// [`super::grok_trust`]).
    pub fn restore_grok_trust_on_close(&mut self, trust: GrokTrust) {
        self.grok_trust = Some(trust);
    }

    /// The real grok trust file this world cleans on close, if any.
    pub fn grok_trust(&self) -> Option<&GrokTrust> {
        self.grok_trust.as_ref()
    }

    /// Stops tmux servers and process groups, then sweeps with the real home
    /// taken from the caller env's `HOME`.
    pub fn close(mut self) -> Result<(), SweepError> {
        let real_home = sweep::default_real_home(&self.caller)?;
        self.stop_and_sweep(&real_home)
    }

    /// As [`Scratch::close`] with an explicit real home, without consuming the
    /// world: after a refusal the tree is intact and a test can repair it and
    /// try again. Once it succeeds, dropping does nothing more.
    pub fn stop_and_sweep(&mut self, real_home: &Path) -> Result<(), SweepError> {
        if self.swept {
            return Ok(());
        }
        let warnings = groups::stop_tmux_servers(&self.socket_dir, &self.env)
            .into_iter()
            .chain(self.groups.terminate_all())
            .chain(groups::stop_stragglers(&self.socket_dir, &self.home));
        for warning in warnings {
            eprintln!(
                "studyloop-acceptance: scratch {}: {warning}",
                self.root.display()
            );
        }
        // After every process is stopped (none can append again), before the sweep.
        if let Some(trust) = &self.grok_trust
            && let Err(e) = trust.remove_inside(&self.root)
        {
            eprintln!("studyloop-acceptance: scratch {}: {e}", self.root.display());
        }
        let target = SweepTarget {
            root: &self.root,
            home: &self.home,
            config_dir: &self.config_dir,
            sentinel_name: SENTINEL_NAME,
            sentinel_token: &self.token,
        };
        sweep::sweep(&target, real_home)?;
        self.swept = true;
        Ok(())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.swept {
            return;
        }
        let result =
            sweep::default_real_home(&self.caller).and_then(|home| self.stop_and_sweep(&home));
        if let Err(err) = result {
            // Never panic in Drop (a second panic aborts): say it loudly instead.
            eprintln!("studyloop-acceptance: SCRATCH SWEEP REFUSED OR FAILED: {err}");
        }
    }
}

fn make_root() -> Result<PathBuf, ScratchError> {
    for _ in 0..CREATE_ATTEMPTS {
        let root = Path::new(sweep::SCRATCH_PARENT).join(format!(
            "{}{}",
            sweep::SCRATCH_PREFIX,
            random_suffix()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&root) {
            Ok(()) => {
                chmod(&root, 0o700)?;
                return Ok(root);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(io("create", &root, source)),
        }
    }
    Err(ScratchError::NoFreeName)
}

type Partial = (ScratchError, Option<String>);

fn populate(root: &Path, caller: CallerEnv, auth_mode: AuthMode) -> Result<Scratch, Partial> {
    let Layout {
        home,
        config_dir,
        state_dir,
        tmp_dir,
        socket_dir,
    } = Layout::of(root);
    mkdir(&home).map_err(|e| (e, None))?;
    // The sentinel goes in first, so any later failure can be cleaned up by
    // the guarded sweeper like a normal close.
    let token = crate::hex::random(16);
    write_private(&home.join(SENTINEL_NAME), token.as_bytes()).map_err(|e| (e, None))?;
    let fail = |e| (e, Some(token.clone()));
    // Who owns the world, so a later run can reap it if this process is
    // SIGKILLed (scratch::reaper); without /proc there is no record and the
    // world is never reaped automatically.
    if let Some(owner) = Owner::current(&token) {
        write_private(&root.join(OWNER_NAME), owner.render().as_bytes()).map_err(fail)?;
    }
    for dir in [
        &home.join(".config"),
        &config_dir,
        &home.join(".local"),
        &home.join(".local/share"),
        &state_dir,
        &home.join(".local/state"),
        &home.join(".cache"),
        &tmp_dir,
        &socket_dir,
    ] {
        mkdir(dir).map_err(fail)?;
    }
    write_private(&config_dir.join("config.yaml"), CONFIG_SEED.as_bytes()).map_err(fail)?;
    let uid = rustix::process::getuid().as_raw();
    let socket = socket_dir.join(format!("tmux-{uid}/default"));
    let len = socket.as_os_str().len();
    if len >= SOCKET_PATH_LIMIT {
        return Err(fail(ScratchError::SocketPathTooLong { path: socket, len }));
    }
    let pointers = Pointers {
        home: &home,
        config_dir: &config_dir,
        state_dir: &state_dir,
        tmp_dir: &tmp_dir,
        socket_dir: &socket_dir,
    };
    let env = match auth_mode {
        AuthMode::RealAuth => Env::real_auth(&caller, &pointers),
        AuthMode::StubProvider | AuthMode::Scrubbed | AuthMode::LocalModel => {
            Env::scrubbed(&caller, &pointers)
        }
    };
    Ok(Scratch {
        root: root.to_owned(),
        home,
        config_dir,
        state_dir,
        tmp_dir,
        socket_dir,
        token,
        auth_mode,
        env,
        caller,
        groups: Groups::default(),
        grok_trust: None,
        swept: false,
    })
}

/// Removes a half-built root: through the guarded sweeper once the sentinel
/// exists, else the (at most two) empty directories made so far.
fn discard_partial(root: &Path, token: Option<&str>) {
    let home = root.join("home");
    let result = match token {
        Some(token) => {
            let target = SweepTarget {
                root,
                home: &home,
                config_dir: &home.join(".config/studyloop"),
                sentinel_name: SENTINEL_NAME,
                sentinel_token: token,
            };
            sweep::default_real_home(&CallerEnv::capture())
                .and_then(|real| sweep::sweep(&target, &real))
        }
        None => {
            let _ = std::fs::remove_file(home.join(SENTINEL_NAME));
            let _ = std::fs::remove_dir(&home);
            std::fs::remove_dir(root).map_err(|source| SweepError::Io {
                action: "remove",
                path: root.to_owned(),
                source,
            })
        }
    };
    if let Err(err) = result {
        eprintln!(
            "studyloop-acceptance: could not remove half-built scratch {}: {err}",
            root.display()
        );
    }
}

fn mkdir(path: &Path) -> Result<(), ScratchError> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(|source| io("create", path, source))?;
    chmod(path, 0o700)
}

fn chmod(path: &Path, mode: u32) -> Result<(), ScratchError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|source| io("chmod", path, source))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ScratchError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| io("create", path, source))?;
    file.write_all(bytes)
        .map_err(|source| io("write", path, source))
}

fn io(action: &'static str, path: &Path, source: std::io::Error) -> ScratchError {
    ScratchError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}
