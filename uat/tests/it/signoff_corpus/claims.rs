//! Crafted inputs, part 3 (issue 33 §1): inputs that PASSed before the sign-off
//! cross-checked claims against independent evidence, and for each field the sign-off
//! reads a case that lies about it (a stub called real, a replay called live, a date out
//! of order, a count no transcript backs, a fidelity below its floor, a missing shard).

use serde_json::{Value, json};
use studyloop_acceptance::ledger::shard_record_file;
use studyloop_actors::llm::cassette::CASSETTE_FILE_NAME;

use super::Craft;
use crate::common::world::{SMOKE, STUDY};

/// A results line's or manifest's fidelity object.
fn fidelity(ratio: f64, pass: bool) -> Value {
    json!({"ratio": ratio, "floor": 1.0, "pass": pass, "scored_turns": 2, "turns": 2, "sources": ["acp"]})
}

/// (name, what the reason must mention, how to craft it).
#[expect(
    clippy::too_many_lines,
    reason = "one table of crafted inputs reads best as one list"
)]
pub(crate) fn cases() -> Vec<(&'static str, &'static str, Craft)> {
    vec![
        // --- the eight inputs of issue 33 §1 that PASSed ------------------------------
        (
            "all seven required bundles given directly, no run directory",
            "no results line",
            |w| {
                let mut all = vec![w.smoke.clone(), w.study.clone()];
                all.extend(w.ungraded.iter().cloned());
                all
            },
        ),
        (
            "replayed bundle: manifest cassette field removed, cassette.jsonl kept",
            "cassette",
            |w| {
                w.add_file(&w.study, CASSETTE_FILE_NAME, b"{\"seal\":\"x\"}\n");
                w.edit_manifest(&w.study, |m| {
                    m.as_object_mut().unwrap().remove("cassette");
                });
                vec![]
            },
        ),
        (
            "results line passed, its fidelity pass=false (0.31)",
            "fidelity",
            |w| {
                w.edit_results(STUDY, |l| l["fidelity"] = fidelity(0.31, false));
                vec![]
            },
        ),
        (
            "manifest fidelity pass=false under a passed results line",
            "fidelity",
            |w| {
                w.edit_manifest(&w.study, |m| m["fidelity"] = fidelity(0.31, false));
                vec![]
            },
        ),
        (
            "partitioned run: shard 2 missing and shard 1's shard record deleted",
            "shard record",
            |w| {
                w.edit_run_file(&shard_record_file("uat"), |_| false);
                vec![]
            },
        ),
        (
            "arbitration with judge_turns 0 and no output tokens, three scored seats",
            "judge turn",
            |w| {
                w.edit_arbitration(|a| {
                    a["judge_turns"] = json!(0);
                    a["judge_output_tokens"] = json!(0);
                    for seat in a["seats"].as_array_mut().unwrap() {
                        seat["output_tokens"] = Value::Null;
                    }
                });
                vec![]
            },
        ),
        ("arbitration dated 1970", "dated before", |w| {
            w.edit_arbitration(|a| a["date"] = json!("1970-01-01T00:00:00Z"));
            vec![]
        }),
        (
            "graded real-auth bundle whose mentor harness is the stub ACP agent",
            "not a real one",
            |w| {
                w.edit_manifest(&w.study, |m| {
                    m["harness"] = json!("studyloop-stub-acp");
                    m["binary_path"] = json!("/work/target/debug/studyloop-stub-acp");
                });
                vec![]
            },
        ),
        // --- a lie about each field the sign-off reads --------------------------------
        ("study harness_version null", "harness_version", |w| {
            w.edit_manifest(&w.study, |m| m["harness_version"] = Value::Null);
            vec![]
        }),
        ("study harness_version blank", "harness_version", |w| {
            w.edit_manifest(&w.study, |m| m["harness_version"] = json!("  "));
            vec![]
        }),
        ("study harness null", "harness", |w| {
            w.edit_manifest(&w.study, |m| m["harness"] = Value::Null);
            vec![]
        }),
        ("study real harness name, stub binary path", "binary", |w| {
            w.edit_manifest(&w.study, |m| {
                m["binary_path"] = json!("/tmp/bin/studyloop-stub-acp");
            });
            vec![]
        }),
        ("study binary_path null", "binary", |w| {
            w.edit_manifest(&w.study, |m| m["binary_path"] = Value::Null);
            vec![]
        }),
        (
            "study real-auth bundle keeps a stub provider log",
            "stub",
            |w| {
                w.add_file(&w.study, "stub-requests.jsonl", b"{}\n");
                vec![]
            },
        ),
        (
            "study real-auth bundle keeps a stub ACP frame log",
            "stub",
            |w| {
                w.add_file(&w.study, "stub-acp-frames.jsonl", b"{}\n");
                vec![]
            },
        ),
        ("study auth_mode stub-provider", "auth mode", |w| {
            w.edit_manifest(&w.study, |m| m["auth_mode"] = json!("stub-provider"));
            vec![]
        }),
        ("study auth_mode local-model", "auth mode", |w| {
            w.edit_manifest(&w.study, |m| m["auth_mode"] = json!("local-model"));
            vec![]
        }),
        ("study auth_mode null", "auth mode", |w| {
            w.edit_manifest(&w.study, |m| m["auth_mode"] = Value::Null);
            vec![]
        }),
        (
            "smoke bundle holds a cassette, manifest silent",
            "cassette",
            |w| {
                w.add_file(&w.smoke, CASSETTE_FILE_NAME, b"{}\n");
                vec![]
            },
        ),
        ("study manifest cassette mode replay", "replayed", |w| {
            w.edit_manifest(&w.study, |m| {
                m["cassette"] =
                    json!({"mode": "replay", "file": "/x/cassette.jsonl", "sha256": null});
            });
            vec![]
        }),
        (
            "results line and manifest disagree about fidelity",
            "disagree",
            |w| {
                w.edit_results(STUDY, |l| l["fidelity"] = fidelity(1.0, true));
                w.edit_manifest(&w.study, |m| {
                    let mut f = fidelity(1.0, true);
                    f["scored_turns"] = json!(1);
                    m["fidelity"] = f;
                });
                vec![]
            },
        ),
        ("smoke results line fidelity pass=false", "fidelity", |w| {
            w.edit_results(SMOKE, |l| l["fidelity"] = fidelity(0.9, false));
            vec![]
        }),
        (
            "shard record catalogue leaves out the study cell",
            "catalogue",
            |w| {
                w.edit_run_file(&shard_record_file("uat"), |s| {
                    for key in ["catalogue", "owned"] {
                        s[key]
                            .as_array_mut()
                            .unwrap()
                            .retain(|c| c.as_str() != Some(STUDY));
                    }
                    true
                });
                vec![]
            },
        ),
        (
            "shard record says shard 1 of 2, shard 2's cell missing",
            "no shard",
            |w| {
                w.edit_run_file(&shard_record_file("uat"), |s| {
                    s["partition"] = json!("hash:1/2");
                    s["catalogue"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!("journey::zz"));
                    true
                });
                vec![]
            },
        ),
        ("run marker dated after the bundles", "dated before", |w| {
            w.edit_run_file("run.json", |r| {
                r["time"] = json!("2026-12-31T23:59:59.000Z");
                true
            });
            vec![]
        }),
        ("run marker dated in the future", "future", |w| {
            w.edit_run_file("run.json", |r| {
                r["time"] = json!("2999-01-01T00:00:00.000Z");
                true
            });
            vec![]
        }),
        ("run marker time not a time", "rfc 3339", |w| {
            w.edit_run_file("run.json", |r| {
                r["time"] = json!("yesterday");
                true
            });
            vec![]
        }),
        ("study bundle dated before the run", "dated before", |w| {
            w.edit_manifest(&w.study, |m| m["date"] = json!("2020-01-01T00:00:00.000Z"));
            vec![]
        }),
        ("smoke bundle dated in the future", "future", |w| {
            w.edit_manifest(&w.smoke, |m| m["date"] = json!("2999-01-01T00:00:00.000Z"));
            vec![]
        }),
        ("smoke bundle date not a time", "rfc 3339", |w| {
            w.edit_manifest(&w.smoke, |m| m["date"] = json!("soon"));
            vec![]
        }),
        (
            "smoke results line dated before its bundle",
            "dated before",
            |w| {
                w.edit_results(SMOKE, |l| l["time"] = json!("2020-01-01T00:00:00.000Z"));
                vec![]
            },
        ),
        ("arbitration dated in the future", "future", |w| {
            w.edit_arbitration(|a| a["date"] = json!("2999-01-01T00:00:00Z"));
            vec![]
        }),
        ("arbitration date not a time", "rfc 3339", |w| {
            w.edit_arbitration(|a| a["date"] = json!("graded"));
            vec![]
        }),
        ("arbitration judge_turns 0 only", "judge turn", |w| {
            w.edit_arbitration(|a| a["judge_turns"] = json!(0));
            vec![]
        }),
        (
            "a scored seat with output_tokens null",
            "output_tokens",
            |w| {
                w.edit_arbitration(|a| a["seats"][1]["output_tokens"] = Value::Null);
                vec![]
            },
        ),
        ("a scored seat with output_tokens 0", "output_tokens", |w| {
            w.edit_arbitration(|a| a["seats"][2]["output_tokens"] = json!(0));
            vec![]
        }),
        (
            "judge_output_tokens below the seats' tokens",
            "output token",
            |w| {
                w.edit_arbitration(|a| a["judge_output_tokens"] = json!(10));
                vec![]
            },
        ),
        (
            "arbitration manifest_digest forged",
            "graded manifest",
            |w| {
                w.edit_arbitration(|a| {
                    a["manifest_digest"] = json!(format!("sha256:{}", "0".repeat(64)))
                });
                vec![]
            },
        ),
        ("arbitration by the hermetic council", "council", |w| {
            w.edit_arbitration(|a| a["council"] = json!("hermetic"));
            vec![]
        }),
        ("arbitration rubric pin stale", "rubric", |w| {
            w.edit_arbitration(|a| a["rubric_pin"]["sha256"] = json!("0".repeat(64)));
            vec![]
        }),
        ("arbitration roster pin stale", "roster", |w| {
            w.edit_arbitration(|a| a["council_pin"]["version"] = json!(99));
            vec![]
        }),
        ("arbitration redaction pin stale", "redaction", |w| {
            w.edit_arbitration(|a| a["redaction_pin"]["sha256"] = json!("0".repeat(64)));
            vec![]
        }),
        ("a seat's model changed", "seat", |w| {
            w.edit_arbitration(|a| a["seats"][0]["model"] = json!("gpt-3.5-turbo"));
            vec![]
        }),
        ("smoke manifest counts a skipped check", "count", |w| {
            w.edit_manifest(&w.smoke, |m| m["counts"]["skipped"] = json!(1));
            vec![]
        }),
        (
            "study manifest budget-exhausted under failed results",
            "disagree",
            |w| {
                w.edit_results(STUDY, |l| l["outcome"] = json!("failed"));
                w.edit_manifest(&w.study, |m| m["outcome"] = json!("budget-exhausted"));
                vec![]
            },
        ),
        // --- §2: a duplicate key (serde_json keeps the last) ---------------------------
        (
            "smoke inventory lists transcript.jsonl twice, wrong hash first",
            "duplicate key",
            |w| {
                let path = w.smoke.join("manifest.json");
                let text = std::fs::read_to_string(&path).unwrap();
                let line = text
                    .lines()
                    .find(|l| l.trim_start().starts_with("\"transcript.jsonl\": "))
                    .unwrap()
                    .to_owned();
                let forged = format!("    \"transcript.jsonl\": \"{}\",\n{line}", "0".repeat(64));
                std::fs::write(&path, text.replacen(&line, &forged, 1)).unwrap();
                vec![]
            },
        ),
        (
            "study results line names its outcome twice",
            "duplicate key",
            |w| {
                let path = w.run.dir().join("results.jsonl");
                let text = std::fs::read_to_string(&path).unwrap();
                let forged: String = text
                    .lines()
                    .map(|l| {
                        if l.contains(STUDY) {
                            l.replacen("{", "{\"outcome\":\"failed\",", 1)
                        } else {
                            l.to_owned()
                        }
                    })
                    .map(|l| l + "\n")
                    .collect();
                std::fs::write(&path, forged).unwrap();
                vec![]
            },
        ),
        (
            "arbitration names judge_turns twice",
            "duplicate key",
            |w| {
                let path = studyloop_uat::bundle::Bundle::open(&w.study)
                    .unwrap()
                    .arbitration_dir()
                    .join(studyloop_uat::council::ARBITRATION_JSON);
                let text = std::fs::read_to_string(&path).unwrap();
                std::fs::write(&path, text.replacen("{", "{\"judge_turns\":0,", 1)).unwrap();
                vec![]
            },
        ),
        ("results line names another run", "run", |w| {
            w.edit_results(SMOKE, |l| l["run"] = json!("some-other-run"));
            vec![]
        }),
    ]
}
