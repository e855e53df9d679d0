//! The module part of `doctor`: every prerequisite an installed module declares
//! (docker, kind, kubectl), found on PATH (its path, and its version when a
//! `--version` answers within [`PREREQ_TIMEOUT`]) or missing (a warning naming
//! the module that needs it and how to install it).
//!
//! A name is looked up only when it is one of core's prerequisites: the manifest
//! check already refuses any other, and a snapshot is read again here, so a path
//! (`/bin/sh`) or shell text (`kind; rm -rf ~`) is shown as not resolvable and
//! never executed. What is found is executed directly, never through a shell.

use std::time::Duration;

use serde::Serialize;

use super::check::{Check, Verdict, check};
use super::harnesses::{VersionProbeError, probe_version};
use crate::context::Ctx;
use crate::env::Env;
use crate::modules::manifest::PREREQUISITES;
use crate::modules::store::{Health, Store};

/// How long a prerequisite gets to print its version: these are quick CLIs,
/// and a doctor run must not wait on a hung one.
pub const PREREQ_TIMEOUT: Duration = Duration::from_secs(3);

/// One declared prerequisite of one installed module, as found.
#[derive(Debug, Clone, Serialize)]
pub struct PrerequisiteInfo {
    /// The module that declares it.
    pub module: String,
    /// The prerequisite's id as declared.
    pub id: String,
    /// found | missing | refused | unknown.
    pub status: &'static str,
    /// Absolute path, when found.
    pub path: Option<String>,
    /// First line of `--version`, when it answered in time; null otherwise.
    pub version: Option<String>,
    /// Why there is no version (or why it was refused), when there is none.
    pub note: Option<String>,
}

/// What looking up one prerequisite name gave.
#[derive(Debug)]
pub enum Probe {
    /// On PATH; the version, or why there is none.
    Found(std::path::PathBuf, Result<String, VersionProbeError>),
    /// Not on PATH.
    Missing,
    /// Not one of core's prerequisite names: not looked up, not run.
    Refused,
    /// The probe thread panicked: nothing is known.
    Panicked,
}

/// Look `name` up on the PATH of `env` and ask it `--version` within `timeout`.
/// Only core's names are looked up ([`Probe::Refused`] otherwise).
pub fn probe(env: &Env, name: &str, timeout: Duration) -> Probe {
    if !PREREQUISITES.contains(&name) {
        return Probe::Refused;
    }
    match crate::procs::which(env, name) {
        None => Probe::Missing,
        Some(path) => {
            let version = probe_version(env, &path, timeout);
            Probe::Found(path, version)
        }
    }
}

/// How to install one of core's prerequisites.
fn install_hint(id: &str) -> &'static str {
    match id {
        "docker" => {
            "install Docker Engine (https://docs.docker.com/engine/install/) and put `docker` on PATH"
        }
        "kind" => {
            "install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) and put `kind` on PATH"
        }
        "kubectl" => {
            "install kubectl (https://kubernetes.io/docs/tasks/tools/) and put `kubectl` on PATH"
        }
        _ => {
            "remove it from the module's `prerequisites`; core knows only docker, kind and kubectl"
        }
    }
}

/// The (module, prerequisite) pairs of every intact installed module. A store or
/// snapshot that cannot be read gives a warning check instead.
fn declared(env: &Env) -> (Vec<(String, String)>, Vec<Check>) {
    let mut pairs = Vec::new();
    let mut checks = Vec::new();
    let store = match Store::new(env) {
        Ok(s) => s,
        Err(e) => {
            checks.push(warn("modules", e.to_string(), None));
            return (pairs, checks);
        }
    };
    let entries = match store.entries() {
        Ok(e) => e,
        Err(e) => {
            checks.push(warn("modules", e.to_string(), None));
            return (pairs, checks);
        }
    };
    for e in entries {
        if store.health(&e) != Health::Intact {
            // `module list` and every drill refuse it already; nothing to probe.
            continue;
        }
        let manifest = store
            .snapshot(&e)
            .and_then(|dir| crate::modules::check::check(&dir))
            .map(|r| r.manifest.unwrap_or_default());
        match manifest {
            Ok(m) => pairs.extend(m.prerequisites.into_iter().map(|p| (e.id.clone(), p))),
            Err(err) => checks.push(warn(&format!("module {}", e.id), err.to_string(), None)),
        }
    }
    (pairs, checks)
}

fn warn(name: &str, detail: String, fix: Option<&str>) -> Check {
    check(name, "module", Verdict::Warn, detail, fix, false)
}

/// One check per declared prerequisite of each installed module (probed in
/// parallel, each bounded by [`PREREQ_TIMEOUT`]).
pub(super) fn checks(ctx: &Ctx) -> (Vec<Check>, Vec<PrerequisiteInfo>) {
    let (pairs, mut checks) = declared(&ctx.env);
    let probes: Vec<Probe> = std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .iter()
            .map(|(_, id)| s.spawn(move || probe(&ctx.env, id, PREREQ_TIMEOUT)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Probe::Panicked))
            .collect()
    });
    let mut infos = Vec::new();
    for ((module, id), found) in pairs.into_iter().zip(probes) {
        let name = format!("module {module}: {id}");
        let info = |status, path: Option<String>, version, note| PrerequisiteInfo {
            module: module.clone(),
            id: id.clone(),
            status,
            path,
            version,
            note,
        };
        match found {
            Probe::Found(path, version) => {
                let shown = path.display().to_string();
                let (detail, version, note) = match version {
                    Ok(v) => (format!("{shown} ({v})"), Some(v), None),
                    Err(e) => (
                        format!("{shown} (version unknown: {e})"),
                        None,
                        Some(e.to_string()),
                    ),
                };
                checks.push(check(&name, "module", Verdict::Ok, detail, None, false));
                infos.push(info("found", Some(shown), version, note));
            }
            Probe::Missing => {
                checks.push(warn(
                    &name,
                    format!("`{id}` not on PATH; module {module} needs it for its drills"),
                    Some(install_hint(&id)),
                ));
                infos.push(info("missing", None, None, None));
            }
            Probe::Panicked => {
                checks.push(warn(&name, "the probe panicked".to_owned(), None));
                infos.push(info("unknown", None, None, None));
            }
            Probe::Refused => {
                let why = format!(
                    "`{id}` is not resolvable: not one of core's prerequisites ({}); not looked up, not run",
                    PREREQUISITES.join(", ")
                );
                checks.push(warn(&name, why.clone(), Some(install_hint(&id))));
                infos.push(info("refused", None, None, Some(why)));
            }
        }
    }
    (checks, infos)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::{PREREQ_TIMEOUT, Probe, probe};
    use crate::env::Env;

    /// A name that is a path or shell text is refused, even when a file of
    /// exactly that name is executable on PATH, and nothing runs.
    #[test]
    fn a_path_or_shell_text_is_not_resolved_or_run() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let script = format!("#!/bin/sh\ntouch {}\necho v1\n", marker.display());
        let names = ["kind;touch x", "$(touch x)", "kind x", "`kind`"];
        for name in names {
            let p = dir.path().join(name);
            std::fs::write(&p, &script).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let env = Env::from_pairs([("PATH", dir.path().as_os_str())]);
        let abs = dir.path().join("kind;touch x").display().to_string();
        for name in names
            .iter()
            .copied()
            .chain([abs.as_str(), "/bin/sh", "../kind"])
        {
            let got = probe(&env, name, PREREQ_TIMEOUT);
            assert!(matches!(got, Probe::Refused), "{name}: {got:?}");
        }
        assert!(!marker.exists(), "a refused name was executed");
        // A core name on that PATH is found and run directly.
        let kind = dir.path().join("kind");
        std::fs::write(&kind, "#!/bin/sh\necho 'kind v1'\n").unwrap();
        std::fs::set_permissions(&kind, std::fs::Permissions::from_mode(0o755)).unwrap();
        let got = probe(&env, "kind", PREREQ_TIMEOUT);
        assert!(
            matches!(&got, Probe::Found(p, Ok(v)) if *p == kind && v == "kind v1"),
            "{got:?}"
        );
    }
}
