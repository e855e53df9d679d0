//! Issue 11 §2/§5: a corpus of crafted run directories and bundles, each built at run time
//! from one genuine sign-off input (real evidence writer, real ledger, an arbitration
//! recomputed from seat replies) and then broken in exactly one way. The genuine input must
//! PASS; every crafted one must FAIL (or be refused with no verdict) with a reason naming
//! what is wrong, and none may hang (FIFOs in place of the files a sign-off reads).

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::world::{SMOKE, STUDY, World, chmod, fifo};
use common::{TRANSCRIPT, bundle, good_reply};
use serde_json::{Value, json};
use studyloop_acceptance::evidence::hash_file;
use studyloop_acceptance::ledger::{MAX_LOG_BYTES, RESULTS_LOG, RunLog, SKIP_LEDGER, TrialOutcome};
use studyloop_redaction::Redactor;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::ARBITRATION_JSON;
use studyloop_uat::signoff;

/// Longest a sign-off may take on any crafted input before it counts as a hang.
const HANG: Duration = Duration::from_secs(30);

/// How one sign-off ended.
#[derive(Debug)]
enum Ending {
    Pass,
    Fail(Vec<String>),
    NoVerdict(String),
    Hang,
}

fn sign_off(w: &World, inputs: Vec<PathBuf>) -> Ending {
    let pins = w.pins.clone();
    let out = w.path("releases");
    let (tx, rx) = mpsc::channel();
    // A FIFO blocks `open` forever on today's code: the sign-off runs on its own thread so
    // a hang is counted instead of hanging the test.
    std::thread::spawn(move || {
        let redactor = Redactor::new(&pins.rules);
        let ending = match signoff::run(&pins, &inputs, &redactor, &out) {
            Ok(r) if r.verdict.passed() => Ending::Pass,
            Ok(r) => Ending::Fail(r.verdict.reasons),
            Err(e) => Ending::NoVerdict(e.to_string()),
        };
        let _ = tx.send(ending);
    });
    rx.recv_timeout(HANG).unwrap_or(Ending::Hang)
}

type Craft = fn(&World) -> Vec<PathBuf>;

/// Every crafted input: (name, what its FAIL reason or refusal must mention, how to craft
/// it). The craft returns the sign-off's inputs (empty = the run directory).
fn corpus() -> Vec<(&'static str, &'static str, Craft)> {
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
            b.record_result(SMOKE, TrialOutcome::Failed, Some("boom"), None)
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
                .record_result(SMOKE, TrialOutcome::Passed, None, Some(&w.smoke))
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

#[test]
fn the_genuine_input_passes_and_every_crafted_one_fails_by_name() {
    let genuine = World::new();
    let ending = sign_off(&genuine, vec![genuine.run.dir().to_owned()]);
    assert!(matches!(ending, Ending::Pass), "genuine input: {ending:#?}");

    let corpus = corpus();
    assert!(corpus.len() >= 57, "{} crafted inputs", corpus.len());
    let mut passed = Vec::new();
    let mut unnamed = Vec::new();
    let mut hung = Vec::new();
    let mut table = BTreeMap::new();
    for (name, needle, craft) in &corpus {
        let w = World::new();
        let mut inputs = craft(&w);
        if inputs.is_empty() {
            inputs.push(w.run.dir().to_owned());
        }
        let ending = sign_off(&w, inputs);
        let text = match &ending {
            Ending::Pass => {
                passed.push(*name);
                "PASS".to_owned()
            }
            Ending::Hang => {
                hung.push(*name);
                "HANG".to_owned()
            }
            Ending::Fail(reasons) => format!("FAIL: {}", reasons.join(" | ")),
            Ending::NoVerdict(e) => format!("NO VERDICT: {e}"),
        };
        if matches!(ending, Ending::Fail(_) | Ending::NoVerdict(_))
            && !text.to_lowercase().contains(needle)
        {
            unnamed.push(format!("{name}: wants `{needle}`: {text}"));
        }
        table.insert(*name, text);
        // The hung thread holds the FIFO open for reading; unblock it so it can end.
        if matches!(ending, Ending::Hang) {
            unblock_fifos(w.tmp.path());
        }
    }
    for (name, text) in &table {
        eprintln!("{name}: {text}");
    }
    eprintln!(
        "crafted inputs: {}; PASS: {}; hung: {}",
        corpus.len(),
        passed.len(),
        hung.len()
    );
    assert!(
        passed.is_empty(),
        "{} of {} crafted inputs PASSed: {passed:#?}",
        passed.len(),
        corpus.len()
    );
    assert!(hung.is_empty(), "sign-off hung on: {hung:#?}");
    assert!(unnamed.is_empty(), "reasons not named: {unnamed:#?}");
}

/// Opens every FIFO under `root` for writing (non-blocking once a reader waits), so a
/// sign-off thread blocked opening it for reading can go on.
fn unblock_fifos(root: &Path) {
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if std::os::unix::fs::FileTypeExt::is_fifo(&t) {
                let _ = rustix::fs::open(
                    e.path(),
                    rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
                    rustix::fs::Mode::empty(),
                );
            }
        }
    }
}
