//! Crafted inputs, part 2 (issue 11 §2 and §5): arbitrations whose derived fields are
//! not what their seat replies give, unknown commits and dirty trees, run directories
//! that hold more than one run, and FIFOs, symlinks and huge files in place of what a
//! sign-off reads.

use serde_json::{Value, json};
use studyloop_acceptance::ledger::{MAX_LOG_BYTES, RESULTS_LOG, RunLog, SKIP_LEDGER, TrialOutcome};
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::ARBITRATION_JSON;

use super::Craft;
use crate::common::good_reply;
use crate::common::world::{SMOKE, fifo};

/// (name, what the reason must mention, how to craft it).
pub(crate) fn cases() -> Vec<(&'static str, &'static str, Craft)> {
    vec![
        // --- §2: the arbitration is recomputed, never trusted ------------------------
        ("all seats absent, medians left at 5", "seat", |w| {
            w.edit_arbitration(|a| {
                for seat in a["seats"].as_array_mut().unwrap() {
                    *seat = json!({"id": seat["id"], "backend": "direct", "model": seat["model"],
                        "output_tokens": null, "status": "absent", "reason": "no key"});
                }
                for c in a["criteria"].as_object_mut().unwrap().values_mut() {
                    c["median"] = json!(5.0);
                }
            });
            vec![]
        }),
        ("one seat scored 1, medians forged to 5", "median", |w| {
            w.grade(&[1, 1, 1]);
            w.edit_arbitration(|a| {
                for c in a["criteria"].as_object_mut().unwrap().values_mut() {
                    c["median"] = json!(5.0);
                }
                a["rejections"] = json!([]);
            });
            vec![]
        }),
        ("reject_if hit removed", "reject_if", |w| {
            let replies = [good_reply(1), good_reply(5), good_reply(5)];
            w.grade_with(&replies, |a| a["rejections"] = json!([]));
            vec![]
        }),
        ("spread forged", "spread", |w| {
            w.edit_arbitration(|a| {
                for c in a["criteria"].as_object_mut().unwrap().values_mut() {
                    c["spread"] = json!(0);
                }
            });
            vec![]
        }),
        ("unknown field in arbitration.json", "unknown field", |w| {
            w.edit_arbitration(|a| a["verdict_override"] = json!("PASS"));
            vec![]
        }),
        ("unknown field in a seat", "unknown field", |w| {
            w.edit_arbitration(|a| a["seats"][0]["trusted"] = json!(true));
            vec![]
        }),
        ("a seat's reply file missing", "seat", |w| {
            let dir = Bundle::open(&w.study).unwrap().arbitration_dir();
            std::fs::remove_file(dir.join("seats/openai-gpt4o.txt")).unwrap();
            vec![]
        }),
        (
            "a seat's reply says 1, the arbitration says 5",
            "seat",
            |w| {
                let dir = Bundle::open(&w.study).unwrap().arbitration_dir();
                std::fs::write(dir.join("seats/openai-gpt4o.txt"), good_reply(2)).unwrap();
                vec![]
            },
        ),
        ("seats not in the council", "seat", |w| {
            w.edit_arbitration(|a| {
                for (i, seat) in a["seats"].as_array_mut().unwrap().iter_mut().enumerate() {
                    seat["id"] = json!(format!("fake-{i}"));
                }
            });
            vec![]
        }),
        ("one seat listed three times", "seat", |w| {
            w.edit_arbitration(|a| {
                let first = a["seats"][0].clone();
                a["seats"] = json!([first.clone(), first.clone(), first]);
            });
            vec![]
        }),
        ("arbitration of another bundle id", "bundle", |w| {
            w.edit_arbitration(|a| a["bundle_run_id"] = json!("20250101T000000Z-deadbeef"));
            vec![]
        }),
        (
            "arbitration schema from the future",
            "schema_version",
            |w| {
                w.edit_arbitration(|a| a["schema_version"] = json!(2));
                vec![]
            },
        ),
        ("arbitration of another cell", "cell", |w| {
            w.edit_arbitration(|a| a["cell"] = json!(SMOKE));
            vec![]
        }),
        ("FIFO in place of arbitration.json", "regular file", |w| {
            let dir = Bundle::open(&w.study).unwrap().arbitration_dir();
            fifo(&dir.join(ARBITRATION_JSON));
            vec![]
        }),
        // --- §2: the one-commit check cannot be skipped ------------------------------
        ("smoke repo_sha null", "repo_sha", |w| {
            w.edit_manifest(&w.smoke, |m| m["repo_sha"] = Value::Null);
            vec![]
        }),
        ("study repo_sha null", "repo_sha", |w| {
            w.edit_manifest(&w.study, |m| m["repo_sha"] = Value::Null);
            vec![]
        }),
        ("both repo_sha null", "repo_sha", |w| {
            w.edit_manifest(&w.smoke, |m| m["repo_sha"] = Value::Null);
            w.edit_manifest(&w.study, |m| m["repo_sha"] = Value::Null);
            vec![]
        }),
        ("smoke dirty", "dirty", |w| {
            w.edit_manifest(&w.smoke, |m| m["dirty"] = json!(true));
            vec![]
        }),
        ("study dirty", "dirty", |w| {
            w.edit_manifest(&w.study, |m| m["dirty"] = json!(true));
            vec![]
        }),
        ("smoke dirty unknown", "dirty", |w| {
            w.edit_manifest(&w.smoke, |m| m["dirty"] = Value::Null);
            vec![]
        }),
        ("bundles from two commits", "commit", |w| {
            w.edit_manifest(&w.smoke, |m| m["repo_sha"] = json!("f".repeat(40)));
            vec![]
        }),
        // --- §2: a run directory belongs to one run ----------------------------------
        ("a second run appended to the run directory", "run", |w| {
            // Another run's results, merged into this directory by hand.
            let other = RunLog::open(w.path("runs/run-2")).unwrap();
            other
                .record_result(SMOKE, TrialOutcome::Passed, None, Some(&w.smoke), None)
                .unwrap();
            let line = std::fs::read(other.dir().join(RESULTS_LOG)).unwrap();
            let mut mine = std::fs::read(w.run.dir().join(RESULTS_LOG)).unwrap();
            mine.extend(line);
            std::fs::write(w.run.dir().join(RESULTS_LOG), mine).unwrap();
            vec![]
        }),
        ("a run directory without its run marker", "run", |w| {
            for e in std::fs::read_dir(w.run.dir()).unwrap() {
                let e = e.unwrap();
                let name = e.file_name();
                if name != RESULTS_LOG && name != SKIP_LEDGER {
                    std::fs::remove_file(e.path()).unwrap();
                }
            }
            vec![]
        }),
        ("the same run directory passed twice", "run", |w| {
            vec![w.run.dir().to_owned(), w.run.dir().to_owned()]
        }),
        // --- §5: readers never block and read regular files only ---------------------
        ("FIFO in place of results.jsonl", "regular file", |w| {
            fifo(&w.run.dir().join(RESULTS_LOG));
            vec![]
        }),
        ("FIFO in place of skip-ledger.jsonl", "regular file", |w| {
            fifo(&w.run.dir().join(SKIP_LEDGER));
            vec![]
        }),
        ("FIFO in place of the smoke manifest", "regular file", |w| {
            fifo(&w.smoke.join("manifest.json"));
            vec![]
        }),
        (
            "FIFO in place of the study manifest, passed directly",
            "regular file",
            |w| {
                fifo(&w.study.join("manifest.json"));
                vec![w.run.dir().to_owned(), w.study.clone()]
            },
        ),
        ("symlink in place of results.jsonl", "regular file", |w| {
            let real = w.path("real-results.jsonl");
            std::fs::rename(w.run.dir().join(RESULTS_LOG), &real).unwrap();
            std::os::unix::fs::symlink(&real, w.run.dir().join(RESULTS_LOG)).unwrap();
            vec![]
        }),
        (
            "symlink in place of the smoke manifest",
            "regular file",
            |w| {
                let real = w.path("real-manifest.json");
                std::fs::rename(w.smoke.join("manifest.json"), &real).unwrap();
                std::os::unix::fs::symlink(&real, w.smoke.join("manifest.json")).unwrap();
                vec![]
            },
        ),
        (
            "symlink in place of arbitration.json",
            "regular file",
            |w| {
                let dir = Bundle::open(&w.study).unwrap().arbitration_dir();
                let real = w.path("real-arbitration.json");
                std::fs::rename(dir.join(ARBITRATION_JSON), &real).unwrap();
                std::os::unix::fs::symlink(&real, dir.join(ARBITRATION_JSON)).unwrap();
                vec![]
            },
        ),
        ("huge sparse results.jsonl", "bytes", |w| {
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(w.run.dir().join(RESULTS_LOG))
                .unwrap();
            f.set_len(MAX_LOG_BYTES + 1).unwrap();
            vec![]
        }),
    ]
}
