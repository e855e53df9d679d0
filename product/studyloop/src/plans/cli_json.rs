//! `--json JSON|-|@PATH` for the plan commands that change something (issue 30
//! item 2; seed 001, "CLI and JSON boundary"): a script sends the same fields the web
//! body and the MCP arguments take, under the same rule (a create names
//! `request_id`, a change the `if_revision` it read), and reads the envelope back.
//!
//! The input is one JSON object of at most [`MAX_INPUT`] bytes of UTF-8: given
//! inline, `-` for stdin, or `@PATH` for a file (relative to the working directory;
//! a regular file, so a FIFO is refused rather than waited on). A field the command
//! does not take is refused by name with the accepted ones, so a misspelt
//! `if_revison` can never be silently ignored.

use std::io::Read as _;
use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{
    CreateRequest, PlanApp, PlanError, evaluation_revision, required_request_id, required_revision,
};

/// The most input bytes read.
pub const MAX_INPUT: u64 = 64 << 20;

/// The input text, from where `raw` says: inline, `-` (stdin) or `@PATH`.
///
/// # Errors
/// [`PlanError::Invalid`] naming the source and what is wrong with it.
pub(super) fn read(raw: &str, cwd: &Path) -> Result<String, PlanError> {
    match raw.strip_prefix('@') {
        Some(rel) => read_source(Path::new(rel), cwd, MAX_INPUT, "the --json input"),
        None if raw == "-" => read_source(Path::new("-"), cwd, MAX_INPUT, "the --json input"),
        None if raw.len() as u64 > MAX_INPUT => {
            Err(too_big("the --json input", "the argument", MAX_INPUT))
        }
        None => Ok(raw.to_owned()),
    }
}

fn too_big(what: &str, from: &str, limit: u64) -> PlanError {
    let size = if limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{} KiB", limit >> 10)
    };
    PlanError::Invalid(format!(
        "{what} ({from}) is larger than {limit} bytes ({size}); send less"
    ))
}

/// Text handed to a plan command, the one reader of `--json -|@PATH` and `plan new
/// --from-file`: `-` reads stdin, anything else the file at `path` (relative to `cwd`;
/// opened as a regular file, so a FIFO or device is refused rather than waited on).
/// At most `limit` bytes of UTF-8; `what` names the input in every refusal.
///
/// # Errors
/// [`PlanError::Invalid`] naming the source and what is wrong with it.
pub(super) fn read_source(
    path: &Path,
    cwd: &Path,
    limit: u64,
    what: &str,
) -> Result<String, PlanError> {
    let bytes = if path.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut b)
            .map_err(|e| PlanError::Invalid(format!("cannot read {what} from stdin: {e}")))?;
        if b.len() as u64 > limit {
            return Err(too_big(what, "stdin", limit));
        }
        b
    } else {
        let path = cwd.join(path);
        let shown = path.display().to_string();
        // Checked first for this message: the bounded reader's own names a planted file.
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() > limit) {
            return Err(too_big(what, &shown, limit));
        }
        crate::fsutil::read_user(&path, limit)
            .map_err(|e| PlanError::Invalid(format!("cannot read {what} {shown}: {e}")))?
            .ok_or_else(|| {
                PlanError::Invalid(format!(
                    "{what} {shown} does not exist; give the path of a file, or `-` for stdin"
                ))
            })?
    };
    String::from_utf8(bytes).map_err(|e| PlanError::Invalid(format!("{what} is not UTF-8 ({e})")))
}

/// `text` as the fields of `command`, every unknown field refused by name.
fn fields<T: DeserializeOwned>(text: &str, command: &str) -> Result<T, PlanError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        PlanError::Invalid(format!("the --json input of `{command}` is not JSON: {e}"))
    })?;
    if !v.is_object() {
        return Err(PlanError::Invalid(format!(
            "the --json input of `{command}` must be a JSON object"
        )));
    }
    serde_json::from_value(v)
        .map_err(|e| PlanError::Invalid(format!("the --json input of `{command}`: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct New {
    request_id: Option<String>,
    title: Option<String>,
    answers: Option<Value>,
    plan_id: Option<String>,
    status: Option<String>,
    markdown: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Status {
    plan_id: String,
    if_revision: Option<String>,
    status: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Milestone {
    plan_id: String,
    if_revision: Option<String>,
    index: i64,
    done: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Evaluate {
    plan_id: String,
    if_revision: Option<String>,
    phase: Option<String>,
    study_id: Option<String>,
    record: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    plan_id: String,
    if_revision: Option<String>,
    title: String,
    body: Option<String>,
    status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Delete {
    plan_id: String,
    if_revision: Option<String>,
    confirmed: bool,
}

/// Run `plan SUB --json`: the envelope's `command` and the result.
///
/// # Errors
/// The input's or the operation's refusal.
pub(super) fn run(app: &PlanApp, sub: &str, text: &str) -> Result<(String, Value), PlanError> {
    let command = format!("plan.{sub}");
    let name = format!("plan {sub}");
    let result = match sub {
        "new" => {
            let f: New = fields(text, &name)?;
            let request_id = required_request_id(f.request_id.as_deref())?;
            let plan = match f.markdown {
                Some(md) => {
                    if f.title.is_some()
                        || f.answers.is_some()
                        || f.plan_id.is_some()
                        || f.status.is_some()
                    {
                        return Err(PlanError::Invalid(
                            "the --json input of `plan new` takes either `markdown` or `title`/`answers`/`plan_id`/`status`, not both".into(),
                        ));
                    }
                    app.create_from_markdown(&md, Some(request_id))?
                }
                None => app.create(&CreateRequest {
                    title: f.title.unwrap_or_default(),
                    answers: f.answers.unwrap_or(Value::Null),
                    plan_id: f.plan_id,
                    status: f.status,
                    request_id: Some(request_id.to_owned()),
                })?,
            };
            app.detail(plan.id.as_str(), false, None)?
        }
        "status" => {
            let f: Status = fields(text, &name)?;
            let expect = required_revision(f.if_revision.as_deref(), &f.plan_id)?;
            let plan = app.set_status(&f.plan_id, expect, &f.status)?;
            app.detail(plan.id.as_str(), false, None)?
        }
        "milestone" => {
            let f: Milestone = fields(text, &name)?;
            let expect = required_revision(f.if_revision.as_deref(), &f.plan_id)?;
            let plan = app.set_milestone(&f.plan_id, expect, f.index, f.done)?;
            app.detail(plan.id.as_str(), false, None)?
        }
        "evaluate" => {
            let f: Evaluate = fields(text, &name)?;
            let record = f.record.unwrap_or(false);
            let expect = evaluation_revision(record, f.if_revision.as_deref(), &f.plan_id)?;
            app.evaluate(
                &f.plan_id,
                f.phase.as_deref().unwrap_or("mid"),
                f.study_id.as_deref().unwrap_or(""),
                record,
                expect,
            )?
        }
        "record" => {
            let f: Record = fields(text, &name)?;
            let expect = required_revision(f.if_revision.as_deref(), &f.plan_id)?;
            app.record_learning(
                &f.plan_id,
                expect,
                &f.title,
                f.body.as_deref().unwrap_or(""),
                f.status.as_deref().unwrap_or("active"),
            )?
        }
        "delete" => {
            let f: Delete = fields(text, &name)?;
            let expect = required_revision(f.if_revision.as_deref(), &f.plan_id)?;
            app.delete(&f.plan_id, expect, f.confirmed)?
        }
        other => {
            return Err(PlanError::Invalid(format!(
                "`plan {other}` takes no --json input"
            )));
        }
    };
    Ok((command, result))
}
