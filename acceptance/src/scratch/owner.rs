//! The owner record of a scratch world (`<root>/owner`): which process made
//! it, so a later run can tell a world whose runner was SIGKILLed (nothing
//! swept it) from one a live runner is still using.
//!
//! A pid alone is not an identity (pids are reused), so the record holds the
//! pid, its start time (`/proc/<pid>/stat` field 22) and its pid namespace;
//! and the world's sentinel token, which must agree with the sentinel file
//! before the reaper sweeps with the usual guards.

use std::fmt::Write as _;

use crate::procfs;

/// The owner record's file name: the sweeper, which keeps it for last, owns it.
pub(crate) use crate::sweep::OWNER_NAME;
/// Records are a few short lines; anything longer is not ours.
pub(crate) const OWNER_MAX: u64 = 512;

/// Who made a scratch world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) pid: i32,
    pub(crate) start: u64,
    pub(crate) pid_ns: String,
    pub(crate) token: String,
}

/// What a record says about its world now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// The owner still runs: the world is in use.
    Alive,
    /// The owner is gone (no such pid, a zombie, or a later process reusing it).
    Dead,
    /// Recorded in another pid namespace: its pid cannot be checked from here.
    Foreign,
}

impl Owner {
    /// This process, owning a world whose sentinel holds `token`; `None`
    /// without `/proc` (such a world is never reaped automatically).
    pub(crate) fn current(token: &str) -> Option<Self> {
        let pid = i32::try_from(std::process::id()).ok()?;
        Some(Self {
            pid,
            start: procfs::start_time(pid)?,
            pid_ns: procfs::pid_namespace(pid)?,
            token: token.to_owned(),
        })
    }

    /// The file's contents.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "pid={}", self.pid);
        let _ = writeln!(out, "start={}", self.start);
        let _ = writeln!(out, "pid_ns={}", self.pid_ns);
        let _ = writeln!(out, "token={}", self.token);
        out
    }

    /// Parses a record; every key once, none unknown.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (mut pid, mut start, mut pid_ns, mut token) = (None, None, None, None);
        for line in text.lines().filter(|l| !l.is_empty()) {
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("line {line:?} is not key=value"))?;
            let slot = match key {
                "pid" => &mut pid,
                "start" => &mut start,
                "pid_ns" => &mut pid_ns,
                "token" => &mut token,
                other => return Err(format!("unknown key {other:?}")),
            };
            if slot.replace(value.to_owned()).is_some() {
                return Err(format!("key {key:?} appears twice"));
            }
        }
        let need = |v: Option<String>, key: &str| v.ok_or_else(|| format!("no {key}= line"));
        let pid = need(pid, "pid")?;
        let start = need(start, "start")?;
        let token = need(token, "token")?;
        if token.len() != 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("token= is not 32 hex digits".to_owned());
        }
        Ok(Self {
            pid: pid
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("pid={pid} is not a pid"))?,
            start: start
                .parse()
                .map_err(|_| format!("start={start} is not a number"))?,
            pid_ns: need(pid_ns, "pid_ns")?,
            token,
        })
    }

    /// Whether the owner still runs, judged from this process.
    pub(crate) fn liveness(&self) -> Liveness {
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        if procfs::pid_namespace(me).as_deref() != Some(self.pid_ns.as_str()) {
            return Liveness::Foreign;
        }
        if procfs::is_same_live_process(self.pid, self.start) {
            Liveness::Alive
        } else {
            Liveness::Dead
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_malformed_records() {
        let token = "0123456789abcdef0123456789abcdef";
        let me = Owner::current(token).unwrap();
        assert_eq!(Owner::parse(&me.render()), Ok(me.clone()));
        assert_eq!(me.liveness(), Liveness::Alive);
        let later = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        assert_eq!(later.liveness(), Liveness::Dead);
        let elsewhere = Owner {
            pid_ns: "pid:[1]".into(),
            ..me.clone()
        };
        assert_eq!(elsewhere.liveness(), Liveness::Foreign);
        let text = me.render();
        for (bad, why) in [
            (format!("{text}pid=1\n"), "appears twice"),
            (format!("{text}extra=1\n"), "unknown key"),
            (text.replace("token=", "token=x"), "32 hex"),
            (text.replace("pid=", "pid=-"), "not a pid"),
            (text.replace("start=", "start=x"), "not a number"),
            (format!("{text}garbage\n"), "not key=value"),
            (String::new(), "no pid= line"),
        ] {
            let err = Owner::parse(&bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }
}
