//! The PTY transport against real `/bin/sh` children: a tty, input, exit codes, group
//! kill on stop, and the input bound.

use std::time::Duration;

use super::pty::*;

fn run(shell_command: &str) -> PtySession {
    let dir = std::env::temp_dir();
    let cmd = PtyCommand {
        shell_command: shell_command.into(),
        cwd: dir,
        env: vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("TERM".into(), "dumb".into()),
        ],
        cols: 80,
        rows: 24,
    };
    PtySession::start(&cmd).expect("start")
}

async fn collect(s: &PtySession) -> (String, PtyEvent) {
    let events = s.events();
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(Some(PtyEvent::Output(b))) => out.extend(b),
            Ok(Some(stop)) => return (String::from_utf8_lossy(&out).into_owned(), stop),
            other => panic!(
                "no stop: {other:?}; output {:?}",
                String::from_utf8_lossy(&out)
            ),
        }
    }
}

/// No process of group `pgid` is alive (zombies awaiting their reaper count as gone).
fn group_gone(pgid: u32) -> bool {
    let live = || {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                // Fields after the command's closing paren: state, ppid, pgrp, ...
                let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
                let f: Vec<&str> = rest.split_whitespace().collect();
                f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z"
            })
    };
    (0..20).any(|_| {
        let gone = !live();
        if !gone {
            std::thread::sleep(Duration::from_millis(100));
        }
        gone
    })
}

#[test]
fn runs_on_a_tty_relays_input_and_reports_exit() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let s = run("test -t 0 && echo on-a-tty; read line; echo got:$line; exit 3");
        s.write(b"hello\r").expect("input accepted");
        let (out, stop) = collect(&s).await;
        assert!(
            out.contains("on-a-tty") && out.contains("got:hello"),
            "{out}"
        );
        assert_eq!(
            stop,
            PtyEvent::Stopped {
                returncode: Some(3),
                reason: "exit"
            }
        );
    });
}

#[test]
fn input_to_a_program_that_does_not_read_is_bounded() {
    let s = run("sleep 300");
    let chunk = vec![b'x'; 64 * 1024];
    let (mut accepted, mut refused) = (0_usize, 0_usize);
    for _ in 0..64 {
        match s.write(&chunk) {
            Ok(()) => accepted += chunk.len(),
            Err(InputFull { pending }) => {
                assert!(pending <= PTY_INPUT_PENDING_BYTES, "{pending}");
                refused += 1;
            }
        }
    }
    assert!(
        refused > 0,
        "4 MiB into a terminal nobody reads must hit the bound"
    );
    // What may be accepted: the pending bound, the chunk that crossed it, and what
    // the writer thread already moved into the kernel, which holds up to its tty
    // buffer limit (64 KiB, TTYB_DEFAULT_MEM_LIMIT) plus N_TTY's 4 KiB read buffer.
    // Under load the writer drains before the loop ends (seen: bound + 128 KiB at
    // load 8), so the kernel's share is part of the bound, not slack.
    const KERNEL_PTY_BUFFER: usize = 64 * 1024 + 4 * 1024;
    assert!(
        accepted <= PTY_INPUT_PENDING_BYTES + chunk.len() + KERNEL_PTY_BUFFER,
        "{accepted} bytes accepted into a terminal nobody reads"
    );
    s.stop_blocking(Duration::from_millis(200));
}

#[test]
fn stop_kills_the_whole_group() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let s = run("sleep 300 & echo started; wait");
        let pid = s.pid();
        let events = s.events();
        while let Some(PtyEvent::Output(b)) = events.recv().await {
            if String::from_utf8_lossy(&b).contains("started") {
                break;
            }
        }
        s.stop_blocking(Duration::from_millis(500));
        let (_, stop) = collect(&s).await;
        assert!(
            matches!(
                stop,
                PtyEvent::Stopped {
                    reason: "cancel",
                    ..
                }
            ),
            "{stop:?}"
        );
        assert!(group_gone(pid), "group {pid} still has live members");
    });
}
