//! Issue 34 §3: `Scratch::close` stops only the tmux servers the world started. A
//! `tmux-<uid>` socket directory, or a socket entry in it, that is a symlink (or a
//! hard link) to an outside server's socket must leave that server running. Each case
//! starts a real tmux server outside the world, plants the link, closes the world and
//! checks the outside server is still alive. Run as root and as a non-root user.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use studyloop_acceptance::procfs::process_alive;
use studyloop_acceptance::scratch::Scratch;

fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// A tmux server outside every scratch world, stopped (by us, through its own
/// socket) when dropped.
struct Outside {
    tmux: PathBuf,
    _dir: tempfile::TempDir,
    socket: PathBuf,
    pid: i32,
}

impl Outside {
    fn start(tmux: &Path) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("outside-tmux-")
            .tempdir_in("/tmp")
            .unwrap();
        let socket = dir.path().join("default");
        let run = |args: &[&str]| {
            Command::new(tmux)
                .arg("-S")
                .arg(&socket)
                .args(args)
                .env_remove("TMUX")
                .env("TMUX_TMPDIR", dir.path())
                .output()
                .unwrap()
        };
        let started = run(&["new-session", "-d", "-s", "outside", "sleep", "600"]);
        assert!(started.status.success(), "{started:?}");
        let pid = String::from_utf8(run(&["display-message", "-p", "#{pid}"]).stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Self {
            tmux: tmux.to_owned(),
            _dir: dir,
            socket,
            pid,
        }
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = Command::new(&self.tmux)
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn tmux_or_skip(scratch: &Scratch) -> Option<PathBuf> {
    let tmux = scratch.env().find_binary("tmux");
    if tmux.is_none() {
        println!("SKIP: no tmux on PATH (install it with `just deps`)");
    }
    tmux
}

fn world_sockets(scratch: &Scratch) -> PathBuf {
    scratch.socket_dir().join(format!("tmux-{}", uid()))
}

#[test]
fn close_leaves_a_server_behind_a_symlinked_socket_dir_alone() {
    let scratch = Scratch::create().unwrap();
    let Some(tmux) = tmux_or_skip(&scratch) else {
        return;
    };
    let outside = Outside::start(&tmux);
    symlink(outside.socket.parent().unwrap(), world_sockets(&scratch)).unwrap();
    scratch.close().unwrap();
    assert!(
        process_alive(outside.pid),
        "close killed the outside tmux server {} through a symlinked tmux-<uid>",
        outside.pid
    );
}

#[test]
fn close_leaves_a_server_behind_a_symlinked_socket_entry_alone() {
    let scratch = Scratch::create().unwrap();
    let Some(tmux) = tmux_or_skip(&scratch) else {
        return;
    };
    let outside = Outside::start(&tmux);
    let dir = world_sockets(&scratch);
    std::fs::create_dir(&dir).unwrap();
    symlink(&outside.socket, dir.join("default")).unwrap();
    symlink(&outside.socket, dir.join("named")).unwrap();
    scratch.close().unwrap();
    assert!(
        process_alive(outside.pid),
        "close killed the outside tmux server {} through a symlinked socket",
        outside.pid
    );
}

#[test]
fn close_leaves_a_server_behind_a_hard_linked_socket_alone() {
    let scratch = Scratch::create().unwrap();
    let Some(tmux) = tmux_or_skip(&scratch) else {
        return;
    };
    let outside = Outside::start(&tmux);
    let dir = world_sockets(&scratch);
    std::fs::create_dir(&dir).unwrap();
    if let Err(e) = std::fs::hard_link(&outside.socket, dir.join("default")) {
        println!("SKIP: cannot hard-link a socket here ({e})");
        return;
    }
    scratch.close().unwrap();
    assert!(
        process_alive(outside.pid),
        "close killed the outside tmux server {} through a hard-linked socket",
        outside.pid
    );
}

#[test]
fn close_still_stops_the_world_s_own_server_next_to_a_planted_link() {
    let scratch = Scratch::create().unwrap();
    let Some(tmux) = tmux_or_skip(&scratch) else {
        return;
    };
    let outside = Outside::start(&tmux);
    let mut start = scratch.command(&tmux);
    start.args(["new-session", "-d", "-s", "own", "sleep", "600"]);
    let started = scratch.run(&mut start, Duration::from_secs(10)).unwrap();
    assert!(started.status.success(), "{}", started.stderr_text());
    let mut pid = scratch.command(&tmux);
    pid.args(["display-message", "-p", "#{pid}"]);
    let own: i32 = scratch
        .run(&mut pid, Duration::from_secs(10))
        .unwrap()
        .stdout_text()
        .trim()
        .parse()
        .unwrap();
    symlink(&outside.socket, world_sockets(&scratch).join("planted")).unwrap();
    scratch.close().unwrap();
    assert!(
        !process_alive(own),
        "the world's own tmux server {own} survived close"
    );
    assert!(
        process_alive(outside.pid),
        "the outside server {} was killed",
        outside.pid
    );
}
