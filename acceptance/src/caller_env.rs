//! The environment this process was started with, captured once and passed
//! explicitly.
//!
//! Everything that must read the *real* environment (the selection, the results
//! directory, the durable UAT evidence root, the source of a scratch world's
//! `PATH`) takes a `&CallerEnv`. A scratch child's environment is a different type
//! ([`crate::scratch::Env`]), so a scratch env can never be handed to code that
//! expects the real one. This is not an environment builder: it only reads.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// A snapshot of a process environment, keyed by variable name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallerEnv {
    vars: BTreeMap<OsString, OsString>,
}

impl CallerEnv {
    /// Captures this process's environment now.
    pub fn capture() -> Self {
        Self {
            vars: std::env::vars_os().collect(),
        }
    }

    /// Builds an environment from explicit pairs; tests use it to control
    /// exactly what a builder sees.
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The raw value of `name`, if set.
    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// The value of `name` as text, if set. A value that is not UTF-8 is
    /// converted lossily, so a parser rejects it by name instead of treating the
    /// variable as unset.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name)
            .map(|value| value.to_string_lossy().into_owned())
    }

    /// Every variable, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }
}

/// Actor availability checks (`studyloop_actors::available`) read credentials
/// from the real environment through this.
impl studyloop_actors::EnvSource for CallerEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.var_os(name)?.to_str().map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_explicit_pairs() {
        let env = CallerEnv::from_pairs([("A", "1"), ("B", "two")]);
        assert_eq!(env.var("A").as_deref(), Some("1"));
        assert_eq!(env.var("B").as_deref(), Some("two"));
        assert_eq!(env.var("C"), None);
        assert_eq!(env.iter().count(), 2);
        let source: &dyn studyloop_actors::EnvSource = &env;
        assert_eq!(source.var("B").as_deref(), Some("two"));
    }
}
