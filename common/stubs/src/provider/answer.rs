//! Which text the stub answers with, in precedence order:
//! 1. a judge or learner role with a canned list: the canned reply (their
//!    canned JSON is the point, even when a `json_schema` format is requested);
//! 2. a structured-output (`json_schema`) request: schema-shaped JSON;
//! 3. a mentor role with a canned list: the canned reply;
//! 4. otherwise the `MENTOR-REPLY <n> <nonce>: …` line (`crate::reply`), or in
//!    realistic mode the Markdown reply behind it (`crate::realistic`), whose
//!    first reply after a resume (no earlier reply holds the review yet) reviews
//!    the resumed session's struggle when the request carries one (`crate::recall`).

use super::request::Exchange;
use super::{ReplyMode, schema};
use crate::realistic::realistic_reply;
use crate::reply::mentor_reply;
use crate::roles::{Role, RolesScript};

/// The reply text for one model request.
pub(crate) fn text(
    seed: u64,
    mode: ReplyMode,
    role: Role,
    script: Option<&RolesScript>,
    ex: &Exchange,
) -> String {
    let canned = script.and_then(|s| s.pick(role, ex.model.as_deref(), ex.assistant_messages));
    match (role, canned, &ex.schema) {
        (Role::Judge | Role::Learner, Some(reply), _) => reply.to_owned(),
        (_, _, Some(shape)) => schema::sample(shape).to_string(),
        (_, Some(reply), None) => reply.to_owned(),
        (_, None, None) => {
            let build = match mode {
                ReplyMode::Echo => mentor_reply,
                ReplyMode::Realistic => realistic_reply,
            };
            let reply = build(
                seed,
                ex.user_turns,
                ex.last_user_text.as_deref(),
                ex.persona.as_deref(),
            );
            match (&ex.recall, mode, ex.reviewed) {
                (Some(item), ReplyMode::Realistic, false) => {
                    crate::recall::with_review(&reply, item)
                }
                _ => reply,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn precedence_is_judge_canned_then_schema_then_mentor_canned_then_default() {
        let script =
            RolesScript::parse(r#"{"version":1,"mentor":["m0"],"judge":["{\"score\":1}"]}"#)
                .unwrap();
        let plain = Exchange {
            user_turns: 1,
            last_user_text: Some("hi".into()),
            ..Exchange::default()
        };
        let schema = Exchange {
            schema: Some(json!({"properties":{"title":{"type":"string"}}})),
            ..plain.clone()
        };
        assert_eq!(
            text(0, ReplyMode::Echo, Role::Judge, Some(&script), &schema),
            "{\"score\":1}"
        );
        assert_eq!(
            text(0, ReplyMode::Echo, Role::Mentor, Some(&script), &schema),
            r#"{"title":"Stub session title"}"#
        );
        assert_eq!(
            text(0, ReplyMode::Echo, Role::Mentor, Some(&script), &plain),
            "m0"
        );
        assert_eq!(
            text(5, ReplyMode::Echo, Role::Mentor, None, &plain),
            mentor_reply(5, 1, Some("hi"), None)
        );
        // Realistic mode changes only the default mentor text.
        assert_eq!(
            text(5, ReplyMode::Realistic, Role::Mentor, None, &plain),
            realistic_reply(5, 1, Some("hi"), None)
        );
        // The opening reply of a resumed session reviews its struggle.
        let resumed = Exchange {
            recall: Some("elision: lifetimes".into()),
            ..plain.clone()
        };
        let review = text(5, ReplyMode::Realistic, Role::Mentor, None, &resumed);
        assert!(
            review.contains("struggling with elision: lifetimes"),
            "{review}"
        );
        // A history that already holds the review is not reviewed again; a
        // resumed harness's older replies (no review) do not stop it.
        let later = Exchange {
            assistant_messages: 3,
            reviewed: true,
            ..resumed.clone()
        };
        let older = Exchange {
            assistant_messages: 3,
            ..resumed.clone()
        };
        assert_eq!(
            text(5, ReplyMode::Realistic, Role::Mentor, None, &older),
            review
        );
        assert_eq!(
            text(5, ReplyMode::Realistic, Role::Mentor, None, &later),
            realistic_reply(5, 1, Some("hi"), None)
        );
        assert_eq!(
            text(5, ReplyMode::Echo, Role::Mentor, None, &resumed),
            mentor_reply(5, 1, Some("hi"), None)
        );
        assert_eq!(
            text(
                0,
                ReplyMode::Realistic,
                Role::Mentor,
                Some(&script),
                &schema
            ),
            r#"{"title":"Stub session title"}"#
        );
    }
}
