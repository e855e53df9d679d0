//! The study arc's script, shared by the browser journey (`journey::study_arc` in
//! the uat crate) and its CLI/tmux run (`cli-tmux::<harness>::study-arc`): the
//! topics the mentor logs through `studyloop-mcp`'s `log_topic` (a struggle, a win,
//! a parked tangent), the learner words of `study-arc-v1.json` that trigger each
//! call in stub-provider mode (`studyloop-stub-provider --tool-script`), and the
//! struggle's own words the product's search must find. A leaf: no lane imports.

use serde_json::json;
use studyloop_actors::ActorKind;
use studyloop_stubs::{ToolScript, ToolStep};

/// One topic the mentor logs through `log_topic`: (concept, status, note).
pub type Logged = (&'static str, &'static str, &'static str);

/// The study topic (the arc's turn script's subject).
pub const TOPIC: &str = "Python decorators and closures";
/// Learner turns the arc drives at least (its turn script has seven).
pub const ARC_TURNS: u32 = 7;
/// Turns the arc's budget must allow: the script's turns and the wind-down turn
/// typed after them (a budget of [`ARC_TURNS`] refused the wind-down).
pub const ARC_BUDGET_TURNS: u32 = ARC_TURNS + 1;

/// The struggle the mentor logs after the learner's late-binding question.
pub const STRUGGLE: Logged = (
    "late binding",
    "struggling",
    "lambdas made in a loop all returned the last value of the loop variable",
);
/// The win the mentor logs after the learner's working decorator.
pub const WIN: Logged = (
    "decorators",
    "win",
    "wrote a working shout decorator on the first try",
);
/// The tangent the mentor parks for later.
pub const PARKED: Logged = (
    "How does functools.wraps keep the wrapped function's name?",
    "parked",
    "asked mid-session; answer next time",
);
/// Every topic the mentor logs, in order.
pub const MENTOR_LOGS: [Logged; 3] = [STRUGGLE, WIN, PARKED];
/// The learner words (from `study-arc-v1.json`) after which the mentor logs each
/// of [`MENTOR_LOGS`].
pub(crate) const TRIGGERS: [&str; 3] = [
    "lambdas made in a loop",
    "def shout",
    "Side question for later",
];
/// The search words: the struggle's own.
pub const SEARCH_WORDS: &str = "lambdas loop variable";
/// A question about the struggle that shares no word with it or the topic: only
/// the hybrid search's embeddings can find it (issue 15 item 6).
pub const PARAPHRASE: &str =
    "anonymous functions created during iteration capture only one final counter";
/// Where `just deps-embed` installs the embedding model, under the workspace root
/// (the product's `embed::INSTALL_DIR`; the product is never linked here).
pub(crate) const EMBED_MODEL_DIR: &str = ".deps/embed-model/wordllama-0.4.0.post1";

/// The installed embedding model's directory.
///
/// # Errors
/// The model is not installed: what is missing and the command that installs it.
pub fn embed_model() -> Result<std::path::PathBuf, String> {
    let dir = crate::bins::workspace_root().join(EMBED_MODEL_DIR);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "the embedding model is not installed ({} is missing): run `just deps-embed` (part of `just deps`)",
            dir.display()
        ))
    }
}

/// Whether `studyloop search --json` output `out` (the envelope around
/// `{mode, notice, results: [...]}`)
/// lists session `id`, with the detail a step records.
///
/// # Errors
/// The output is not the JSON object `search --json` prints.
pub fn search_hit(out: &str, id: &str) -> Result<(bool, serde_json::Value), String> {
    let hits = crate::door::json_result(out, "search")?;
    let results = hits["results"]
        .as_array()
        .ok_or_else(|| format!("search --json has no `results` list: {out:.300}"))?;
    let found = results.iter().any(|h| h["session_id"] == id);
    let ranks: Vec<serde_json::Value> = results
        .iter()
        .filter(|h| h["session_id"] == id)
        .map(|h| json!({"lexical_rank": h["lexical_rank"], "semantic_rank": h["semantic_rank"]}))
        .collect();
    Ok((
        found,
        json!({"hits": results.len(), "found_session": found, "mode": hits["mode"],
            "notice": hits["notice"], "session_ranks": ranks}),
    ))
}

/// The struggle as the product's notes list it (`name: note`).
#[must_use]
pub fn struggle_item() -> String {
    format!("{}: {}", STRUGGLE.0, STRUGGLE.2)
}

/// Why the study arc cannot run with `selection`, if it cannot (a requirement of
/// both arcs, decided when the catalogue is built so it is a listed skip under
/// nextest too). With the stub as the mentor's model, the mentor's `log_topic`
/// calls fire on the arc script's own words ([`TRIGGERS`]), which only the
/// scripted learner says: a model learner talks freely, so the mentor would never
/// log and the arc would fail for a reason that is not the product's. With a real
/// mentor model (real auth) the mentor decides itself, and any learner will do.
#[must_use]
pub(crate) fn learner_unmet(selection: &crate::selection::Selection) -> Option<String> {
    (selection.auth_mode.stub_mentor() && selection.actor != ActorKind::Scripted).then(|| {
        format!(
            "the scripted learner, not `{}`: the stub mentor's log_topic calls fire on the arc script's words (run the arc with STUDYLOOP_ACC_ACTOR=scripted, or with a real mentor model)",
            selection.actor
        )
    })
}

/// The learner requirement of both arcs ([`learner_unmet`]).
#[must_use]
pub fn learner_requirement(selection: &crate::selection::Selection) -> crate::runner::Requirement {
    crate::runner::Requirement::Checked {
        what: "a learner that says the arc script's words, or a real mentor model".into(),
        unmet: learner_unmet(selection),
    }
}

/// The mentor's scripted `log_topic` calls: each fires on the learner's turn that
/// shows the struggle, the win or the tangent; the stub picks the harness's own
/// name for the tool from the tools its request offers.
#[must_use]
pub fn tool_script() -> ToolScript {
    let step = |trigger: &str, (topic, status, note): Logged| ToolStep {
        trigger: trigger.to_owned(),
        tool: "log_topic".to_owned(),
        arguments: json!({"topic": topic, "status": status, "note": note}),
    };
    ToolScript::new(
        TRIGGERS
            .iter()
            .zip(MENTOR_LOGS)
            .map(|(t, l)| step(t, l))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scripted_learner_runs_the_arc_on_a_stub_mentor() {
        use crate::selection::{AuthMode, Selection};
        let with = |actor, auth_mode| Selection {
            actor,
            auth_mode,
            ..Selection::defaults()
        };
        assert_eq!(
            learner_unmet(&with(ActorKind::Scripted, AuthMode::StubProvider)),
            None
        );
        for mode in [AuthMode::StubProvider, AuthMode::LocalModel] {
            for actor in [ActorKind::Gateway, ActorKind::Direct, ActorKind::Harness] {
                let why = learner_unmet(&with(actor, mode)).expect("a listed skip");
                assert!(
                    why.contains(&format!("not `{actor}`"))
                        && why.contains("STUDYLOOP_ACC_ACTOR=scripted"),
                    "{why}"
                );
            }
        }
        // A real mentor model logs on its own judgement: any learner.
        assert_eq!(
            learner_unmet(&with(ActorKind::Gateway, AuthMode::RealAuth)),
            None
        );
    }

    #[test]
    fn every_trigger_is_in_exactly_one_turn_of_the_arcs_script() {
        let script =
            crate::turn_scripts::named_turn_script(crate::turn_scripts::ARC_TURN_SCRIPT).unwrap();
        let prompts = script.prompts();
        assert_eq!(prompts.len(), ARC_TURNS as usize);
        for t in TRIGGERS {
            assert_eq!(prompts.iter().filter(|p| p.contains(t)).count(), 1, "{t}");
        }
        let json: serde_json::Value = serde_json::from_str(&tool_script().to_json()).unwrap();
        assert_eq!(json.as_array().map(Vec::len), Some(3));
        assert_eq!(json[0]["arguments"]["status"], "struggling");
        assert_eq!(json[2]["arguments"]["status"], "parked");
    }

    #[test]
    fn the_struggle_is_found_by_its_own_words() {
        let item = struggle_item();
        for w in SEARCH_WORDS.split_whitespace() {
            assert!(item.contains(w), "{w} is not in {item}");
        }
    }

    #[test]
    fn the_paraphrase_shares_no_word_with_the_struggle_or_the_topic() {
        let words = |t: &str| -> Vec<String> {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect()
        };
        let known: Vec<String> = [struggle_item().as_str(), TOPIC]
            .iter()
            .flat_map(|t| words(t))
            .collect();
        for w in words(PARAPHRASE) {
            assert!(!known.contains(&w), "`{w}` is shared");
        }
    }

    #[test]
    fn a_search_hit_is_read_from_the_results_list() {
        let out = r#"{"schema_version":1,"command":"search","result":{"mode":"hybrid","notice":null,"results":[{"session_id":"s1","lexical_rank":null,"semantic_rank":2}]}}"#;
        let (found, detail) = search_hit(out, "s1").unwrap();
        assert!(found);
        assert_eq!(detail["session_ranks"][0]["semantic_rank"], 2);
        assert!(!search_hit(out, "s2").unwrap().0);
        let empty = r#"{"schema_version":1,"command":"search","result":[]}"#;
        assert!(
            search_hit(empty, "s1")
                .unwrap_err()
                .contains("no `results` list")
        );
        // The bare object of before the envelope is not a search answer.
        let bare = r#"{"mode":"hybrid","notice":null,"results":[{"session_id":"s1"}]}"#;
        assert!(
            search_hit(bare, "s1")
                .unwrap_err()
                .contains("no `search` success envelope")
        );
    }

    #[test]
    fn an_unknown_script_name_is_named_with_the_shipped_set() {
        let e = crate::turn_scripts::named_turn_script("nope.json").unwrap_err();
        assert!(
            e.contains("`nope.json`") && e.contains("study-arc-v1.json"),
            "{e}"
        );
    }
}
