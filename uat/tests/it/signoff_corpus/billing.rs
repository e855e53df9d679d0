//! Crafted inputs, part 4 (issue 29 item 5): real-auth bundles that billed a
//! capability their recorded approvals do not cover (the harness, a model learner,
//! a judge seat that graded it), each refused naming the capability.

use serde_json::{Value, json};

use super::Craft;

/// The study bundle's recorded approvals without `drop`.
fn without(w: &crate::common::world::World, drop: &'static str) {
    w.edit_manifest(&w.study, |m| {
        let kept: Vec<Value> = m["approvals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["capability"] != drop)
            .cloned()
            .collect();
        m["approvals"] = Value::Array(kept);
    });
}

/// A gateway learner that ran (`actor_model` recorded), with `capability` recorded.
fn gateway_learner(m: &mut Value, capability: Option<&str>) {
    m["actor_backend"] = json!("gateway");
    m["actor_model"] = json!("studyloop-learner");
    if let Some(c) = capability {
        m["learner_capability"] = json!(c);
    }
}

/// (name, what the reason must mention, how to craft it).
pub(crate) fn cases() -> Vec<(&'static str, &'static str, Craft)> {
    vec![
        (
            "study graded by a judge seat it recorded no approval for",
            "billed `judge:release/gemini-flash` (a judge seat that graded it)",
            |w| {
                without(w, "judge:release/gemini-flash");
                vec![]
            },
        ),
        (
            "study's judge seat approved for chargeable only",
            "do not include `judge:release/openai-gpt4o[chargeable,credentialed]`",
            |w| {
                w.edit_manifest(&w.study, |m| {
                    for r in m["approvals"].as_array_mut().unwrap() {
                        if r["capability"] == "judge:release/openai-gpt4o" {
                            r["reasons"] = json!(["chargeable"]);
                        }
                    }
                });
                vec![]
            },
        ),
        (
            "study's harness not among its approvals",
            "billed `harness:claude` (its harness)",
            |w| {
                without(w, "harness:claude");
                vec![]
            },
        ),
        (
            "smoke's harness not among its approvals",
            "billed `harness:claude` (its harness)",
            |w| {
                w.edit_manifest(&w.smoke, |m| m["approvals"] = json!([]));
                vec![]
            },
        ),
        ("study recorded no approvals at all", "none recorded", |w| {
            w.edit_manifest(&w.study, |m| {
                m.as_object_mut().unwrap().remove("approvals");
            });
            vec![]
        }),
        (
            "study's gateway learner billed without its approval",
            "billed `learner:gateway/studyloop-learner` (its learner)",
            |w| {
                w.edit_manifest(&w.study, |m| {
                    gateway_learner(m, Some("learner:gateway/studyloop-learner"));
                });
                vec![]
            },
        ),
        (
            "study's gateway learner recorded no learner capability",
            "recorded no learner_capability",
            |w| {
                w.edit_manifest(&w.study, |m| gateway_learner(m, None));
                vec![]
            },
        ),
        (
            "study's learner capability is not a capability id",
            "is not a capability id",
            |w| {
                w.edit_manifest(&w.study, |m| {
                    gateway_learner(m, Some("learner:*"));
                });
                vec![]
            },
        ),
        (
            "smoke billed a direct learner without its approval",
            "billed `learner:openai/gpt-4o-mini` (its learner)",
            |w| {
                w.edit_manifest(&w.smoke, |m| {
                    m["actor_backend"] = json!("direct");
                    m["actor_model"] = json!("gpt-4o-mini");
                    m["learner_capability"] = json!("learner:openai/gpt-4o-mini");
                });
                vec![]
            },
        ),
    ]
}
