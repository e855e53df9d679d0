//! The study arc's reads of what the product recorded, and its checks: the live
//! session's state, the topics the mentor logged through `studyloop-mcp`, the end,
//! the learner record, the next day's review and the browser's network trace. The
//! journey itself writes nothing into the product but what a learner types.

use serde_json::json;
use studyloop_acceptance::case::{Case, Checks, StepFailure};
use studyloop_acceptance::door::{self, ProductDb};
use studyloop_acceptance::study_arc::{
    ARC_TURNS, MENTOR_LOGS, PARAPHRASE, PARKED, SEARCH_WORDS, STRUGGLE, TOPIC, WIN, embed_model,
    search_hit, struggle_item, tool_script,
};
use studyloop_acceptance::web_acp::trace::NetworkTrace;
use studyloop_stubs::recall;

use super::web::{self, errored};
use super::{product, study};

/// One session as the state reported it.
#[derive(Debug, Clone)]
pub struct Live {
    /// The study session id.
    pub id: String,
    /// The persona hash the state recorded.
    pub persona_hash: String,
    /// The agent's pid.
    pub agent_pid: Option<i32>,
    /// When it started (the product's clock).
    pub started_at: Option<String>,
    /// When it ended, once it has.
    pub ended_at: Option<String>,
}

/// The harness pointed at its model; in stub-provider mode the stub gets the
/// mentor's tool script (written into the scratch world, kept in the bundle).
pub(super) fn provision(c: &mut Case<'_>) -> Result<(), StepFailure> {
    // The stub is the mentor's model in local-model mode too.
    if !c.ctx.selection.auth_mode.stub_mentor() {
        return study::provision(c);
    }
    let script = tool_script().to_json();
    let path = c.scratch()?.root().join("mentor-tools.json");
    std::fs::write(&path, &script).map_err(errored)?;
    c.record.attach("stub/mentor-tools.json", script);
    let path = path.display().to_string();
    study::provision_with(c, &["--tool-script", &path])
}

/// `GET /api/session/state` as a [`Live`]; the body goes to the bundle.
pub(super) fn live_state(c: &mut Case<'_>) -> Result<Live, StepFailure> {
    let state = web::session_state(c)?;
    let id = state
        .study_session_id()
        .ok_or_else(|| errored(format!("the state names no session: {state}")))?
        .to_owned();
    c.record
        .attach_json(&format!("product/session-state-{id}.json"), state.raw())?;
    let live = Live {
        persona_hash: state.persona_hash().unwrap_or_default().to_owned(),
        agent_pid: state.child_pid(),
        started_at: state.started_at().map(str::to_owned),
        ended_at: state.ended_at().map(str::to_owned),
        id,
    };
    c.record.detail(json!({"study_session_id": live.id, "mode": state.mode(), "transport": state.transport(), "started_at": live.started_at, "agent_pid_reported": live.agent_pid.is_some()}));
    Ok(live)
}

/// The topics feed holds what only the mentor's `log_topic` calls can have written
/// (the journey logs nothing); the stub's log shows the calls when it scripted them.
pub(super) fn mentor_logged(c: &mut Case<'_>, live: &Live) -> Result<(), StepFailure> {
    let st = door::status(c, "status-after-conversation")?;
    let logged = st.topics_logged().unwrap_or(0);
    c.record.detail(
        json!({"active": st.active(), "topics_logged": logged, "study_session_id": live.id}),
    );
    if st.active() != Some(true) {
        return Err(errored(format!(
            "the session is not live after the conversation: {st}"
        )));
    }
    if c.has_stub() {
        tool_calls_answered(c).map_err(errored)?;
    }
    if logged < MENTOR_LOGS.len() as u64 {
        return Err(errored(format!(
            "the mentor logged {logged} topic(s) through studyloop-mcp, expected {} (a struggle, a win, a parked question): the harness made fewer log_topic tool calls",
            MENTOR_LOGS.len(),
        )));
    }
    Ok(())
}

/// The stub's log: each scripted `log_topic` call was sent to the harness, and a
/// later request carried studyloop-mcp's answer (`"logged": true`) back.
fn tool_calls_answered(c: &mut Case<'_>) -> Result<(), String> {
    let records = c.stub_records().map_err(|e| e.to_string())?;
    let calls: Vec<&str> = records
        .iter()
        .filter_map(|r| r.tool_call.as_ref())
        .map(|t| t.name.as_str())
        .collect();
    let results = records
        .iter()
        .filter_map(|r| r.tool_result.as_deref())
        .filter(|t| t.contains("\"logged\"") && t.contains("true"))
        .count();
    let notes: Vec<&str> = records
        .iter()
        .filter_map(|r| r.tool_note.as_deref())
        .collect();
    c.record
        .detail(json!({"tool_calls": calls, "logged_results": results, "tool_notes": notes}));
    let want = MENTOR_LOGS.len();
    if calls.len() >= want && results >= want {
        Ok(())
    } else {
        Err(format!(
            "the stub sent {} log_topic call(s) ({calls:?}) and got {results} studyloop-mcp result(s) back, want {want} each; tool notes: {notes:?} (is studyloop-mcp registered with the harness's ACP session?)",
            calls.len()
        ))
    }
}

/// The wind-down's status: the session still live with the mentor's topics.
pub(super) fn wind_down_status(c: &mut Case<'_>) -> Result<(), StepFailure> {
    let st = door::status(c, "status-wind-down")?;
    c.record.detail(st.summary());
    if st.active() == Some(true) {
        Ok(())
    } else {
        Err(errored(format!(
            "the session is not live at the wind-down: {st}"
        )))
    }
}

/// After the console's End: the state ended, the agent exited; the `ended_at`.
pub(super) fn ended(c: &mut Case<'_>, live: &Live) -> Result<Option<String>, StepFailure> {
    let state = web::session_state(c)?;
    c.record.attach_json(
        &format!("product/session-state-{}-ended.json", live.id),
        state.raw(),
    )?;
    let gone = live.agent_pid.map(web::wait_gone);
    c.record
        .detail(json!({"mode": state.mode(), "ended_at": state.ended_at(), "agent_exited": gone}));
    if !state.is_ended() || state.study_session_id() != Some(live.id.as_str()) {
        return Err(errored(format!(
            "expected session {} ended, the state says: {state}",
            live.id
        )));
    }
    match gone {
        Some(true) => Ok(state.ended_at().map(str::to_owned)),
        Some(false) => Err(errored(format!(
            "the agent (pid {:?}) still runs after the end",
            live.agent_pid
        ))),
        None => Err(errored(
            "the state never reported the agent's pid (child_pid)",
        )),
    }
}

/// The closed row, its progress and indexed notes; the notes name the mentor's
/// struggle, win and parked question.
pub(super) fn learner_record(c: &mut Case<'_>, live: &Live) -> Result<(), StepFailure> {
    let path = product::database(c)?;
    let record = ProductDb::open(&path)
        .and_then(|db| db.session_record(&live.id))
        .map_err(errored)?;
    for (table, rows) in record.tables() {
        // The rubric cites `db/<table>`: the first session's rows, the one graded.
        c.record.attach_json(&format!("db/{table}.json"), rows)?;
    }
    let mut problems = record.problems(&live.persona_hash, &[STRUGGLE.0, WIN.0]);
    let notes = record.notes().unwrap_or_default().to_owned();
    for (section, item) in [
        ("Struggling:", struggle_item()),
        ("Wins:", format!("{}: {}", WIN.0, WIN.2)),
        ("Parked:", PARKED.0.to_owned()),
    ] {
        let listed = notes
            .split_once(section)
            .is_some_and(|(_, rest)| rest.contains(&item));
        if !listed {
            problems.push(format!("the notes list no `{item}` under {section}"));
        }
    }
    c.record
        .detail(json!({"notes": notes, "problems": problems}));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(errored(problems.join("; ")))
    }
}

/// The next day's session: a new row on the next day, the resume context in the
/// persona the console sent, received by the harness's model, and the review.
pub(super) fn review_checks<'c, 'a>(
    first: &'c Live,
    live: &'c Live,
    review: String,
    sent: Vec<String>,
) -> Checks<'c, Case<'a>> {
    let item = struggle_item();
    let item2 = item.clone();
    Checks::new()
        .check(
            "a new session, started on the next day",
            move |_: &mut Case<'a>| next_day_start(first, live),
        )
        .check(
            "the persona the console sent carries the resume context",
            move |_| {
                let persona = sent
                    .iter()
                    .find(|f| f.contains(recall::RESUME_HEADING))
                    .ok_or("no frame the page sent holds the resume section")?;
                for needle in ["1 day ago", item2.as_str()] {
                    if !persona.contains(&needle.replace('"', "\\\"")) {
                        return Err(format!("the resumed persona lacks `{needle}`"));
                    }
                }
                Ok(())
            },
        )
        .check(
            "the harness passed the resume context to its model; the review reflects it",
            move |c: &mut Case<'a>| reflected(c, &item, &review),
        )
}

fn next_day_start(first: &Live, live: &Live) -> Result<(), String> {
    if live.id == first.id {
        return Err(format!("the resume reused session {}", first.id));
    }
    let day = |s: &Option<String>| -> Option<jiff::civil::Date> {
        let t: jiff::Timestamp = s.as_deref()?.parse().ok()?;
        Some(jiff::tz::TimeZone::UTC.to_datetime(t).date())
    };
    match (day(&first.ended_at), day(&live.started_at)) {
        (Some(a), Some(b)) if a.tomorrow().ok() == Some(b) => Ok(()),
        (a, b) => Err(format!(
            "the first session ended on {a:?}, the resumed one started on {b:?}: not the next day"
        )),
    }
}

/// Stub mode: the stub saw the struggle in the request (its log's `recall`) and its
/// review line quotes it; the console shows that line. A real model: the review
/// names the struggle's concept (the council grades the rest).
fn reflected(c: &mut Case<'_>, item: &str, review: &str) -> Result<(), String> {
    if !c.has_stub() {
        let lower = review.to_lowercase();
        return if lower.contains(STRUGGLE.0) || lower.contains("loop") {
            Ok(())
        } else {
            Err(format!(
                "the review does not mention `{}` or the loop: {review:.300}",
                STRUGGLE.0
            ))
        };
    }
    let records = c.stub_records().map_err(|e| e.to_string())?;
    let received = records
        .iter()
        .filter(|r| r.recall.as_deref() == Some(item))
        .count();
    if received == 0 {
        return Err(format!(
            "no request the harness sent its model carried the struggle `{item}` in a resume section"
        ));
    }
    let line = recall::review_line(item);
    if review.contains(&line) {
        Ok(())
    } else {
        Err(format!(
            "the console's review lacks `{line}`: {review:.300}"
        ))
    }
}

/// The network trace: two starts, two sockets, every typed turn as a sent frame.
pub(super) fn trace_checks<'a>(trace: NetworkTrace) -> Checks<'static, Case<'a>> {
    let t = std::rc::Rc::new(trace);
    let (t1, t2, t3) = (t.clone(), t.clone(), t);
    Checks::new()
        .check(
            "exactly two POST /api/session/start (first day, resume)",
            move |_: &mut Case<'a>| match t1.count("POST", "/api/session/start") {
                2 => Ok(()),
                n => Err(format!("{n} start requests in the trace")),
            },
        )
        .check("a session socket per session", move |_| {
            match t2
                .sockets()
                .iter()
                .filter(|u| u.contains("/api/session/ws"))
                .count()
            {
                n if n >= 2 => Ok(()),
                n => Err(format!("{n} session sockets in the trace")),
            }
        })
        .check(
            "every learner input went over the socket and frames came back",
            move |_| {
                // Two personas, the arc's turns and the wind-down, each an `input` frame.
                let inputs = t3
                    .frames_sent()
                    .iter()
                    .filter(|f| f.contains("\"type\":\"input\""))
                    .count();
                let want = 2 + ARC_TURNS as usize + 1;
                let received = t3.frames_received().len();
                if inputs >= want && received > inputs {
                    Ok(())
                } else {
                    Err(format!(
                        "{inputs} input frames sent (want {want}), {received} frames received"
                    ))
                }
            },
        )
}

/// `studyloop search <the struggle's words> --json` finds the first session, and so
/// does a paraphrase sharing no word with it (the hybrid search, with the model
/// `just deps-embed` installs; a missing model fails the step by name).
pub(super) fn search(c: &mut Case<'_>, id: &str) -> Result<(), StepFailure> {
    let model = embed_model().map_err(errored)?;
    c.env = c
        .env
        .clone()
        .with_var("STUDYLOOP_EMBED_MODEL", &model)
        .map_err(StepFailure::from_error)?;
    for (tag, query) in [("search", SEARCH_WORDS), ("search-paraphrase", PARAPHRASE)] {
        let out = door::studyloop(c, tag, &["search", query, "--json"])?;
        let (found, detail) = search_hit(&out, id).map_err(errored)?;
        c.record
            .detail(json!({"query": query, "topic": TOPIC, "result": detail}));
        if !found {
            return Err(errored(format!(
                "`studyloop search {query}` has no hit for session {id}: {out:.600}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(id: &str, started: Option<&str>, ended: Option<&str>) -> Live {
        Live {
            id: id.into(),
            persona_hash: String::new(),
            agent_pid: None,
            started_at: started.map(str::to_owned),
            ended_at: ended.map(str::to_owned),
        }
    }

    #[test]
    fn the_resume_must_be_a_new_session_on_the_next_day() {
        let first = live("a", None, Some("2026-11-30T23:58:00Z"));
        assert_eq!(
            next_day_start(&first, &live("b", Some("2026-12-01T23:58:05Z"), None)),
            Ok(())
        );
        let same_day = next_day_start(&first, &live("b", Some("2026-11-30T23:59:00Z"), None));
        assert!(same_day.unwrap_err().contains("not the next day"));
        let two_days = next_day_start(&first, &live("b", Some("2026-12-02T00:00:00Z"), None));
        assert!(two_days.is_err());
        let reused = next_day_start(&first, &live("a", Some("2026-12-01T23:58:05Z"), None));
        assert!(reused.unwrap_err().contains("reused"));
    }
}
