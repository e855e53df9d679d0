//! Crafted inputs, part 1 (issue 11 §2): ledger records that disagree, manifests that
//! disagree with their results line, and cells without their own clean bundle.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use serde_json::json;
use studyloop_acceptance::evidence::hash_file;
use studyloop_acceptance::ledger::{RunLog, TrialOutcome};

use super::Craft;
use crate::common::world::{SMOKE, STUDY, chmod, fifo};
use crate::common::{TRANSCRIPT, bundle};

/// (name, what the reason must mention, how to craft it).
pub(crate) fn cases() -> Vec<(&'static str, &'static str, Craft)> {
    vec![
        // --- §2: sources disagreeing about a required cell ---------------------------
        ("smoke failed then passed", "disagree", |w| {
            w.results(&[
                (SMOKE, TrialOutcome::Failed, Some(&w.smoke)),
                (SMOKE, TrialOutcome::Passed, Some(&w.smoke)),
                (STUDY, TrialOutcome::Passed, Some(&w.study)),
            ]);
            vec![]
        }),
        ("study failed then passed", "disagree", |w| {
            w.result(STUDY, TrialOutcome::Failed, Some(&w.study));
            w.pass(STUDY, &w.study);
            vec![]
        }),
        (
            "smoke skipped in the ledger, passed in results",
            "disagree",
            |w| {
                w.run.record_skip(SMOKE, "gate closed").unwrap();
                vec![]
            },
        ),
        (
            "study skipped in the ledger, passed in results",
            "disagree",
            |w| {
                w.run.record_skip(STUDY, "gate closed").unwrap();
                vec![]
            },
        ),
        ("smoke results skipped then passed", "disagree", |w| {
            w.result(SMOKE, TrialOutcome::Skipped, None);
            w.pass(SMOKE, &w.smoke);
            vec![]
        }),
        ("study results skipped then passed", "disagree", |w| {
            w.result(STUDY, TrialOutcome::Skipped, None);
            w.pass(STUDY, &w.study);
            vec![]
        }),
        (
            "smoke passed twice, second without a bundle",
            "bundle",
            |w| {
                w.result(SMOKE, TrialOutcome::Passed, None);
                vec![]
            },
        ),
        ("smoke passed twice with two bundles", "bundles", |w| {
            let other = bundle(&w.path("durable"), SMOKE, TRANSCRIPT);
            w.pass(SMOKE, &other);
            vec![]
        }),
        ("smoke failed in a second shard", "failed", |w| {
            let b = RunLog::open(w.path("runs/run-2")).unwrap();
            b.record_result(SMOKE, TrialOutcome::Failed, Some("boom"), None, None)
                .unwrap();
            vec![w.run.dir().to_owned(), b.dir().to_owned()]
        }),
        ("smoke skipped in a second shard", "skipped", |w| {
            let b = RunLog::open(w.path("runs/run-2")).unwrap();
            b.record_skip(SMOKE, "not selected").unwrap();
            vec![w.run.dir().to_owned(), b.dir().to_owned()]
        }),
        ("study skip line after its pass", "disagree", |w| {
            w.result(STUDY, TrialOutcome::Skipped, None);
            vec![]
        }),
        (
            "smoke failed line hidden before a skip and a pass",
            "disagree",
            |w| {
                w.results(&[
                    (SMOKE, TrialOutcome::Failed, None),
                    (SMOKE, TrialOutcome::Skipped, None),
                    (SMOKE, TrialOutcome::Passed, Some(&w.smoke)),
                    (STUDY, TrialOutcome::Passed, Some(&w.study)),
                ]);
                vec![]
            },
        ),
        // --- §2: the bundle's own manifest against the results line -------------------
        ("smoke manifest errored, results passed", "errored", |w| {
            w.edit_manifest(&w.smoke, |m| m["outcome"] = json!("errored"));
            vec![]
        }),
        ("study manifest errored, results passed", "errored", |w| {
            w.edit_manifest(&w.study, |m| m["outcome"] = json!("errored"));
            vec![]
        }),
        ("smoke manifest cancelled", "cancelled", |w| {
            w.edit_manifest(&w.smoke, |m| m["outcome"] = json!("cancelled"));
            vec![]
        }),
        ("smoke manifest skipped", "skipped", |w| {
            w.edit_manifest(&w.smoke, |m| m["outcome"] = json!("skipped"));
            vec![]
        }),
        ("study manifest skipped", "skipped", |w| {
            w.edit_manifest(&w.study, |m| m["outcome"] = json!("skipped"));
            vec![]
        }),
        ("smoke manifest names another cell", "cell", |w| {
            w.edit_manifest(&w.smoke, |m| m["cell"] = json!("probe::codex"));
            vec![]
        }),
        ("smoke manifest names the study cell", "cell", |w| {
            w.edit_manifest(&w.smoke, |m| m["cell"] = json!(STUDY));
            vec![]
        }),
        ("study manifest names another cell", "cell", |w| {
            w.edit_manifest(&w.study, |m| m["cell"] = json!("journey::other"));
            vec![]
        }),
        ("smoke manifest tier acceptance", "tier", |w| {
            w.edit_manifest(&w.smoke, |m| m["tier"] = json!("acceptance"));
            vec![]
        }),
        ("study manifest tier acceptance", "tier", |w| {
            w.edit_manifest(&w.study, |m| m["tier"] = json!("acceptance"));
            vec![]
        }),
        ("smoke manifest surface probe", "surface", |w| {
            w.edit_manifest(&w.smoke, |m| m["surface"] = json!("probe"));
            vec![]
        }),
        ("study manifest surface probe", "surface", |w| {
            w.edit_manifest(&w.study, |m| m["surface"] = json!("probe"));
            vec![]
        }),
        ("smoke manifest surface cli-tmux", "surface", |w| {
            w.edit_manifest(&w.smoke, |m| m["surface"] = json!("cli-tmux"));
            vec![]
        }),
        ("study manifest surface web-acp", "surface", |w| {
            w.edit_manifest(&w.study, |m| m["surface"] = json!("web-acp"));
            vec![]
        }),
        ("smoke manifest counts a failed check", "count", |w| {
            w.edit_manifest(&w.smoke, |m| m["counts"]["failed"] = json!(1));
            vec![]
        }),
        (
            "smoke manifest run id is not its directory",
            "run id",
            |w| {
                w.edit_manifest(&w.smoke, |m| {
                    m["run_id"] = json!("20250101T000000Z-deadbeef");
                });
                vec![]
            },
        ),
        (
            "smoke passed directly as a bundle with an errored manifest",
            "errored",
            |w| {
                w.edit_manifest(&w.smoke, |m| m["outcome"] = json!("errored"));
                vec![w.run.dir().to_owned(), w.smoke.clone()]
            },
        ),
        // --- §2: every required cell has its own verified bundle ---------------------
        ("smoke bundle null", "bundle", |w| {
            w.results(&[
                (SMOKE, TrialOutcome::Passed, None),
                (STUDY, TrialOutcome::Passed, Some(&w.study)),
            ]);
            vec![]
        }),
        ("study bundle null", "bundle", |w| {
            w.results(&[
                (SMOKE, TrialOutcome::Passed, Some(&w.smoke)),
                (STUDY, TrialOutcome::Passed, None),
            ]);
            vec![]
        }),
        ("smoke recorded with the study bundle", "bundle", |w| {
            w.results(&[
                (SMOKE, TrialOutcome::Passed, Some(&w.study)),
                (STUDY, TrialOutcome::Passed, Some(&w.study)),
            ]);
            vec![]
        }),
        ("study recorded with the smoke bundle", "bundle", |w| {
            w.results(&[
                (SMOKE, TrialOutcome::Passed, Some(&w.smoke)),
                (STUDY, TrialOutcome::Passed, Some(&w.smoke)),
            ]);
            vec![]
        }),
        ("smoke bundle missing on disk", "bundle", |w| {
            std::fs::remove_dir_all(&w.smoke).unwrap();
            vec![]
        }),
        ("smoke bundle file altered", "inventory", |w| {
            std::fs::write(w.smoke.join("transcript.jsonl"), "{}\n").unwrap();
            vec![]
        }),
        ("smoke bundle extra file", "inventory", |w| {
            std::fs::write(w.smoke.join("extra.txt"), "x").unwrap();
            chmod(&w.smoke.join("extra.txt"), 0o600);
            vec![]
        }),
        ("smoke bundle extra empty directory", "director", |w| {
            std::fs::create_dir(w.smoke.join("empty")).unwrap();
            chmod(&w.smoke.join("empty"), 0o700);
            vec![]
        }),
        ("smoke bundle file mode 0644", "mode", |w| {
            chmod(&w.smoke.join("transcript.jsonl"), 0o644);
            vec![]
        }),
        ("smoke bundle dir mode 0755", "mode", |w| {
            chmod(&w.smoke, 0o755);
            vec![]
        }),
        ("study bundle subdirectory mode 0755", "mode", |w| {
            chmod(&w.study.join("db"), 0o755);
            vec![]
        }),
        ("smoke bundle file hard-linked outside", "link", |w| {
            std::fs::hard_link(w.smoke.join("transcript.jsonl"), w.path("outside")).unwrap();
            vec![]
        }),
        (
            "smoke bundle raw 0xFF name beside its lossy twin",
            "inventory",
            |w| {
                // The inventory lists `notes\u{FFFD}.txt`; a raw 0xFF name decodes to the same.
                let twin = w.smoke.join("notes\u{FFFD}.txt");
                std::fs::write(&twin, "legit").unwrap();
                chmod(&twin, 0o600);
                let hash = hash_file(&twin).unwrap();
                let raw = w.smoke.join(OsStr::from_bytes(b"notes\xFF.txt"));
                std::fs::write(&raw, "hidden").unwrap();
                chmod(&raw, 0o600);
                w.edit_manifest(&w.smoke, |m| {
                    m["file_inventory"]["notes\u{FFFD}.txt"] = json!(hash);
                });
                vec![]
            },
        ),
        ("smoke bundle symlink", "inventory", |w| {
            std::os::unix::fs::symlink("/etc/hostname", w.smoke.join("link")).unwrap();
            vec![]
        }),
        ("smoke bundle FIFO file", "inventory", |w| {
            fifo(&w.smoke.join("pipe"));
            vec![]
        }),
    ]
}
