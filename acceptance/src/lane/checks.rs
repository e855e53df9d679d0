//! The lanes' validators that read what the product left: the product DB row
//! and `studyloop doctor`.

use super::cli_tmux::CLI_TIMEOUT;
use crate::bins;
use crate::case::Case;
use crate::validate::{self, CheckError};

pub(crate) fn db_row(l: &mut Case<'_>, state: &serde_json::Value) -> Result<(), CheckError> {
    let id = validate::state_str(state, "study_session_id")?;
    let want = validate::state_str(state, "persona_hash")?;
    let db = l
        .scratch()
        .map_err(|_| CheckError::NoScratch)?
        .config_dir()
        .join("sessions.db");
    let got = validate::db_persona_hash(&db, &id)?;
    if got == want {
        Ok(())
    } else {
        Err(CheckError::PersonaHash { got, want })
    }
}

pub(crate) fn doctor(l: &mut Case<'_>) -> Result<(), CheckError> {
    let failed = CheckError::Doctor;
    let studyloop = bins::path("studyloop").map_err(|e| failed(e.to_string()))?;
    let scratch = l.scratch().map_err(|_| CheckError::NoScratch)?;
    let before = validate::tree_sizes(scratch.config_dir());
    let mut cmd = scratch.command(&studyloop);
    l.env.apply(&mut cmd).args(["doctor", "--json"]);
    let done = scratch
        .run(&mut cmd, CLI_TIMEOUT)
        .map_err(|e| failed(e.to_string()))?;
    let after = validate::tree_sizes(scratch.config_dir());
    l.record.attach("product/doctor.json", done.stdout.clone());
    let report: serde_json::Value = serde_json::from_slice(&done.stdout)
        .map_err(|e| failed(format!("printed no JSON ({e}): {}", done.stderr_text())))?;
    if done.status.code() == Some(2) {
        return Err(failed(format!(
            "reports a failing core check (exit 2): {report}"
        )));
    }
    // The harness keeps writing into its session dir (config/sessions/<name>)
    // while doctor runs; only the product's own files must stay untouched.
    let own =
        |m: std::collections::BTreeMap<String, u64>| -> std::collections::BTreeMap<String, u64> {
            m.into_iter()
                .filter(|(p, _)| !p.contains("/sessions/"))
                .collect()
        };
    let (before, after) = (own(before), own(after));
    if before != after {
        let changed: Vec<&String> = after
            .keys()
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        return Err(failed(format!(
            "changed the product's files under the scratch config dir: {changed:?}"
        )));
    }
    let listed = report["harnesses"].as_array().is_some_and(|hs| {
        hs.iter()
            .any(|h| h["name"] == l.harness.as_str() && !h["version"].is_null())
    });
    if listed {
        Ok(())
    } else {
        Err(failed(format!("reports no version for {}", l.harness)))
    }
}
