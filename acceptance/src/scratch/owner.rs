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

/// Why an owner record was not read. A world whose record is refused is left
/// as it is: the reaper never guesses at an owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OwnerError {
    /// The record could not be opened (absent, a symlink, …).
    #[error("no owner record ({0})")]
    Open(String),
    /// The record could not be read.
    #[error("owner record unreadable ({0})")]
    Unreadable(String),
    /// Something other than a regular file stands in its place.
    #[error("the owner record is not a regular file")]
    NotAFile,
    /// A line without `=`.
    #[error("malformed owner record (line {0:?} is not key=value)")]
    NotKeyValue(String),
    /// A key this version does not write.
    #[error("malformed owner record (unknown key {0:?})")]
    UnknownKey(String),
    /// A key written twice.
    #[error("malformed owner record (key {0:?} appears twice)")]
    Twice(String),
    /// A required key is absent.
    #[error("malformed owner record (no {0}= line)")]
    Missing(&'static str),
    /// The token is not the sentinel's 32 hex digits.
    #[error("malformed owner record (token= is not 32 hex digits)")]
    Token,
    /// `pid=` is not a positive pid.
    #[error("malformed owner record (pid={0} is not a pid)")]
    Pid(String),
    /// `start=` is not a number.
    #[error("malformed owner record (start={0} is not a number)")]
    Start(String),
}

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
    pub(crate) fn parse(text: &str) -> Result<Self, OwnerError> {
        let (mut pid, mut start, mut pid_ns, mut token) = (None, None, None, None);
        for line in text.lines().filter(|l| !l.is_empty()) {
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| OwnerError::NotKeyValue(line.to_owned()))?;
            let slot = match key {
                "pid" => &mut pid,
                "start" => &mut start,
                "pid_ns" => &mut pid_ns,
                "token" => &mut token,
                other => return Err(OwnerError::UnknownKey(other.to_owned())),
            };
            if slot.replace(value.to_owned()).is_some() {
                return Err(OwnerError::Twice(key.to_owned()));
            }
        }
        let need = |v: Option<String>, key: &'static str| v.ok_or(OwnerError::Missing(key));
        let pid = need(pid, "pid")?;
        let start = need(start, "start")?;
        let token = need(token, "token")?;
        if token.len() != 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(OwnerError::Token);
        }
        Ok(Self {
            pid: pid
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .ok_or(OwnerError::Pid(pid))?,
            start: start.parse().map_err(|_| OwnerError::Start(start))?,
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
            let err = Owner::parse(&bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }
}
