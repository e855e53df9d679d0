//! The wrapped pane command: a `/bin/sh` script that puts the session dir
//! (and its `studyloop` shim) first on PATH, re-exports the StudyLoop
//! variables (a pre-existing tmux server has its own environment), removes the
//! test hatches, runs the agent, and ends the session when the agent exits.

use std::fmt::Write as _;

use std::path::Path;

use crate::env::{self, Env};
use crate::shell::{is_var_name, quote};

/// Test hatches: never exported into the pane, and unset there (a
/// pre-existing tmux server may hold them in its global environment).
const HATCHES: &[&str] = &[
    env::STUDYLOOP_TEST_AGENT_CMD,
    env::STUDYLOOP_TEST_ACP_CMD,
    env::STUDYLOOP_TEST_KILL_AT,
];

/// Variables re-exported into the pane besides every `STUDYLOOP_*`.
const ALSO_EXPORTED: &[&str] = &[env::HOME, env::SESSION_CONTEXT_SCOPE];

/// `export …;` lines that make the pane resolve the same paths as the caller.
pub fn exports(caller: &Env, session_dir: &Path) -> String {
    let mut s = format!(
        "export PATH={}:\"$PATH\"; ",
        quote(&session_dir.to_string_lossy())
    );
    for (k, v) in caller.iter() {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        // The hatches never reach the pane; a marker inherited from another
        // session's pane would make this one's processes look like that one's.
        let hatch = HATCHES.contains(&k) || k == env::STUDYLOOP_SESSION_MARK;
        let wanted = (k.starts_with("STUDYLOOP_") || ALSO_EXPORTED.contains(&k)) && !hatch;
        if wanted && is_var_name(k) {
            let _ = write!(s, "export {k}={}; ", quote(v));
        }
    }
    let _ = write!(
        s,
        "unset {} {}; ",
        HATCHES.join(" "),
        env::STUDYLOOP_SESSION_MARK
    );
    s
}

/// The script run in the main pane. The agent runs [`contained`]; every
/// process of the session is also marked with `STUDYLOOP_SESSION_MARK=<study
/// id>`, so the end finds those of a fallback containment (no namespaces)
/// that left the process group (`setsid`, `nohup`) and stops them.
pub fn main_script(
    exports: &str,
    agent_command: &str,
    exe: &Path,
    study_id: &str,
    scrub: bool,
) -> String {
    let run = if scrub {
        // Scrub the pane's real environment (not just the caller's) right before exec.
        format!(
            "{} scrubbed-exec /bin/sh -c {}",
            quote(&exe.to_string_lossy()),
            quote(agent_command)
        )
    } else {
        agent_command.to_owned()
    };
    let run = contained(exe, &run);
    let exe = quote(&exe.to_string_lossy());
    let id = quote(study_id);
    format!(
        "{exports}export {}={id}; {run}; {exe} end-on-exit --study-id {id}",
        env::STUDYLOOP_SESSION_MARK
    )
}

/// `command` (a `/bin/sh` command line) run by `studyloop contain`: in a
/// PID namespace of its own, so nothing it starts outlives it
/// (docs/security-hardening.md#one-containment-for-every-launch-path). The
/// tmux pane and the web PTY launch through this; the ACP agent through
/// [`crate::modules::contained_argv`].
#[must_use]
pub fn contained(exe: &Path, command: &str) -> String {
    format!(
        "{} {} -- /bin/sh -c {}",
        quote(&exe.to_string_lossy()),
        crate::modules::CONTAIN_COMMAND,
        quote(command)
    )
}

/// The sidebar pane's argv.
pub fn sidebar_argv(exports: &str, exe: &Path) -> Vec<String> {
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("{exports}exec {} sidebar", quote(&exe.to_string_lossy())),
    ]
}

/// The hatch's command with `{persona_file}` replaced by the quoted path,
/// wrapped so it runs under `/bin/sh -c` as the reference does.
pub fn hatch_command(template: &str, persona_file: &Path) -> String {
    let cmd = template.replace("{persona_file}", &quote(&persona_file.to_string_lossy()));
    format!("/bin/sh -c {}", quote(&cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_keep_studyloop_vars_and_drop_hatches() {
        let caller = Env::from_pairs([
            ("HOME", "/h"),
            ("STUDYLOOP_DB", "/d b.db"),
            ("STUDYLOOP_TEST_AGENT_CMD", "x"),
            ("STUDYLOOP_CONFIG", "/c.yaml"),
            ("OPENAI_API_KEY", "sk"),
        ]);
        let e = exports(&caller, Path::new("/s/d"));
        assert!(e.starts_with("export PATH='/s/d':\"$PATH\"; "));
        assert!(e.contains("export HOME='/h'; ") && e.contains("export STUDYLOOP_DB='/d b.db'; "));
        assert!(!e.contains("OPENAI") && !e.contains("STUDYLOOP_TEST_AGENT_CMD="));
        // The pane's own `studyloop` must find the same config as the caller.
        assert!(e.contains("export STUDYLOOP_CONFIG='/c.yaml'; "));
        assert!(e.ends_with(
            "unset STUDYLOOP_TEST_AGENT_CMD STUDYLOOP_TEST_ACP_CMD STUDYLOOP_TEST_KILL_AT STUDYLOOP_SESSION_MARK; "
        ));
    }

    #[test]
    fn hatch_substitutes_and_quotes() {
        let c = hatch_command(
            "cat {persona_file} > seen.md; exec cat",
            Path::new("/s/p.md"),
        );
        assert_eq!(c, "/bin/sh -c 'cat '\\''/s/p.md'\\'' > seen.md; exec cat'");
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(hatch_command(
                "printf %s {persona_file}",
                Path::new("/a b/p.md"),
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "/a b/p.md");
    }
}
