//! The web console's Labs catalogue (`GET /api/labs`): the installed modules
//! and their drills, with exactly what the learner may see — each task's id,
//! prompt and success criteria, and the commands to run in their own terminal.
//! Hints, solutions and mentor notes never leave the snapshot this way, and
//! nothing here runs anything: drills execute only from the CLI, after typed
//! consent. A snapshot that fails its digest is listed as not intact, without
//! drills.

use serde_json::{Value, json};

use super::check::check;
use super::drill::PHASES;
use super::store::{Health, Store};
use crate::env::Env;

/// `{"modules": [...]}`; empty when none is installed (the Labs entry hides).
pub(crate) fn catalogue(env: &Env) -> Value {
    let Ok(store) = Store::new(env) else {
        return json!({ "modules": [] });
    };
    let entries = match store.entries() {
        Ok(e) => e,
        Err(e) => return json!({ "modules": [], "error": e.to_string() }),
    };
    let modules: Vec<Value> = entries
        .iter()
        .map(|e| {
            let intact = store.health(e) == Health::Intact;
            let drills = if intact {
                drills(&store, e)
            } else {
                Vec::new()
            };
            json!({ "id": e.id, "version": e.version, "intact": intact, "drills": drills })
        })
        .collect();
    json!({ "modules": modules })
}

fn drills(store: &Store, entry: &super::store::LockEntry) -> Vec<Value> {
    let Ok(dir) = store.snapshot(entry) else {
        return Vec::new();
    };
    let Ok(report) = check(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in &report.decks {
        for t in &d.tasks {
            let id = format!("{}/{}/{}", entry.id, d.id, t.id);
            // In phase order, whatever order the deck lists them in.
            let commands: Vec<String> = PHASES
                .iter()
                .filter(|p| t.phases.iter().any(|x| x.name == **p))
                .map(|p| format!("studyloop drill {p} {id}"))
                .collect();
            out.push(json!({
                "id": id, "module": entry.id, "deck": d.id, "task": t.id,
                "prompt": t.prompt, "successCriteria": t.criteria, "commands": commands,
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labs_lists_drills_only_while_a_module_is_installed_and_only_learner_fields() {
        let home = tempfile::tempdir().unwrap();
        let src = tempfile::tempdir().unwrap();
        let env = Env::from_pairs([("HOME", home.path().as_os_str())]);
        assert_eq!(catalogue(&env), json!({ "modules": [] }));
        let m = super::super::scaffold::create(src.path(), "my-drills").unwrap();
        let store = Store::new(&env).unwrap();
        assert!(matches!(
            store.add(&m).unwrap(),
            super::super::store::Added::Installed(_)
        ));
        let got = catalogue(&env);
        let drill = &got["modules"][0]["drills"][0];
        assert_eq!(drill["id"], "my-drills/getting-started/ready-01");
        assert_eq!(
            drill["commands"],
            json!(["studyloop drill check my-drills/getting-started/ready-01"])
        );
        assert_eq!(drill["prompt"], "Run the check phase and read its result.");
        let text = got.to_string();
        for hidden in [
            "hint",
            "mentorNotes",
            "solution",
            "The check script only prints ready.",
        ] {
            assert!(!text.contains(hidden), "{hidden} leaked to Labs: {text}");
        }
        store.remove("my-drills").unwrap();
        assert_eq!(catalogue(&env), json!({ "modules": [] }));
    }
}
