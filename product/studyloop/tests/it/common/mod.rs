//! A hermetic world for driving the real `studyloop` binary: a temp HOME, a
//! private tmux socket dir under /tmp (short enough for sun_path), a fake-bin
//! dir first on PATH, and an environment built from nothing. Dropping the
//! world kills its private tmux server, then removes the temp dirs.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of this helper"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A stand-in harness: records its first prompt file and env, then waits.
pub const AGENT_CMD: &str =
    "cat {persona_file} > persona-seen.md; env > agent-env.txt; echo agent-ready; exec cat";

pub struct World {
    pub home: tempfile::TempDir,
    pub sock: tempfile::TempDir,
    pub bin: PathBuf,
    env: Vec<(String, String)>,
}

/// A finished command.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    fn from(o: Output) -> Self {
        Self {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Assert success and return self.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }
}

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_studyloop")
}

impl World {
    /// A world with no config (the scope gate is closed).
    pub fn bare() -> Self {
        let home = tempfile::Builder::new()
            .prefix("slt-home-")
            .tempdir()
            .expect("temp HOME");
        // tmux puts its socket at $TMUX_TMPDIR/tmux-<uid>/default: keep it short.
        let sock = tempfile::Builder::new()
            .prefix("slt-")
            .tempdir_in("/tmp")
            .expect("tmux dir");
        let bin = home.path().join("fake-bin");
        std::fs::create_dir_all(&bin).unwrap();
        let env = vec![
            ("HOME".into(), home.path().display().to_string()),
            ("PATH".into(), format!("{}:/usr/bin:/bin", bin.display())),
            ("TMUX_TMPDIR".into(), sock.path().display().to_string()),
            ("TERM".into(), "xterm-256color".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        Self {
            home,
            sock,
            bin,
            env,
        }
    }

    /// A world with `config init` done and the test agent hatch set.
    pub fn new() -> Self {
        let w = Self::bare();
        w.run(&["config", "init"]).ok();
        w.with_env("STUDYLOOP_TEST_AGENT_CMD", AGENT_CMD)
    }

    pub fn with_env(mut self, k: &str, v: &str) -> Self {
        self.set_env(k, v);
        self
    }

    pub fn set_env(&mut self, k: &str, v: &str) {
        self.env.retain(|(n, _)| n != k);
        self.env.push((k.into(), v.into()));
    }

    pub fn remove_env(&mut self, k: &str) {
        self.env.retain(|(n, _)| n != k);
    }

    /// This world's environment as a library `Env` (benches call the library directly).
    pub fn lib_env(&self) -> studyloop::env::Env {
        studyloop::env::Env::from_pairs(self.env.iter().cloned())
    }

    pub fn env_value(&self, k: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(exe());
        c.args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.home.path())
            .stdin(Stdio::null());
        c
    }

    /// Runs `args` with the kill hatch at `step` (`STUDYLOOP_TEST_KILL_AT`); it
    /// must die by SIGKILL.
    #[track_caller]
    pub fn killed_at(&self, step: &str, args: &[&str]) {
        use std::os::unix::process::ExitStatusExt;
        let out = self
            .cmd(args)
            .env("STUDYLOOP_TEST_KILL_AT", step)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(9),
            "{args:?} was not killed at {step}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Any program with this world's environment and cwd.
    pub fn program(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.home.path());
        c
    }

    pub fn run(&self, args: &[&str]) -> Out {
        Out::from(self.cmd(args).output().expect("run studyloop"))
    }

    /// Run tmux against this world's private server.
    pub fn tmux(&self, args: &[&str]) -> Out {
        let mut c = Command::new("/usr/bin/tmux");
        c.args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        Out::from(c.output().expect("run tmux"))
    }

    pub fn sessions(&self) -> Vec<String> {
        let o = self.tmux(&["list-sessions", "-F", "#{session_name}"]);
        if o.code != 0 {
            return Vec::new();
        }
        o.stdout.lines().map(str::to_owned).collect()
    }

    pub fn server_running(&self) -> bool {
        self.tmux(&["list-sessions"]).code == 0
    }

    pub fn config_dir(&self) -> PathBuf {
        self.home.path().join(".config/studyloop")
    }

    pub fn state_path(&self) -> PathBuf {
        self.config_dir().join("session-state.json")
    }

    pub fn state(&self) -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(self.state_path()).ok()?;
        Some(serde_json::from_str(&text).expect("state is JSON"))
    }

    /// The state's string field.
    #[track_caller]
    pub fn field(&self, name: &str) -> String {
        let s = self.state().expect("state file exists");
        s[name]
            .as_str()
            .unwrap_or_else(|| panic!("state field {name} missing in {s}"))
            .to_owned()
    }

    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.config_dir().join("sessions.db")).expect("open DB")
    }

    /// Put an executable script into the fake-bin dir.
    pub fn fake_bin(&self, name: &str, script: &str) -> PathBuf {
        let p = self.bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// The pid running in the main pane, and whether it has a child (the agent).
    pub fn main_pane_has_child(&self) -> bool {
        let pane = self.field("mux_main_pane");
        let o = self.tmux(&["display-message", "-p", "-t", &pane, "#{pane_pid}"]);
        let Ok(pid) = o.stdout.trim().parse::<i32>() else {
            return false;
        };
        !studyloop::procs::children(pid).is_empty()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.server_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The median of some timings (benches).
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Milliseconds as a float (benches).
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Poll `f` until it is true or `secs` pass.
#[track_caller]
pub fn wait_until(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("timed out after {secs}s waiting for: {what}");
}

/// Read a file once it exists (and is non-empty).
#[track_caller]
pub fn read_when_ready(path: &Path, secs: u64) -> String {
    wait_until(secs, &format!("{} to be written", path.display()), || {
        std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
    });
    std::fs::read_to_string(path).unwrap()
}

pub fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The `result` of what `studyloop COMMAND --json` printed, which must be the
/// success envelope `{"schema_version": 1, "command": COMMAND, "result"}`.
#[track_caller]
pub fn json_result(out: &Out, command: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("`{command} --json` printed no JSON ({e}): {out:?}"));
    assert!(
        v["schema_version"] == 1 && v["command"] == command,
        "`{command} --json` printed no `{command}` success envelope: {out:?}"
    );
    v["result"].clone()
}
