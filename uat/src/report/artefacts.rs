//! The artefact sections of a cell page, each a file kind of the bundle:
//! pane screens, browser screenshots, ACP/WS frames, the stub's request log,
//! the arbitration beside the bundle and the file list. (The page frame, the
//! attempts, manifest, steps, transcript and fidelity are in `cell`.)

use std::fmt::Write as _;

use serde_json::Value;

use super::cell::{Image, end, heading, none};
use super::html::{Render, slug};
use super::model::arbitration;
use super::source::{self, Entry};
use crate::bundle::Bundle;

fn text_files(
    body: &mut String,
    bundle: Option<&Bundle>,
    entries: &[Entry],
    pick: impl Fn(&str) -> bool,
    r: &Render<'_>,
) -> usize {
    let Some(b) = bundle else { return 0 };
    let mut shown = 0;
    for e in entries.iter().filter(|e| pick(&e.rel)) {
        let _ = writeln!(body, "<h3><code>{}</code></h3>", r.t(&e.rel));
        if !e.regular {
            none(
                body,
                "Not a regular file (a symlink or special file): not read.",
            );
            continue;
        }
        match source::read_text(&b.dir().join(&e.rel)) {
            Some((text, cut)) => body.push_str(&r.pre(&text, cut)),
            None => none(body, "Unreadable."),
        }
        shown += 1;
    }
    shown
}

pub(crate) fn screens(
    body: &mut String,
    bundle: Option<&Bundle>,
    entries: &[Entry],
    r: &Render<'_>,
) {
    let pick = |p: &str| p.starts_with("screens/") && p.ends_with(".txt");
    let empty = "No pane screen in the bundle.";
    text_section(
        body,
        ("screens", "Pane screens"),
        bundle,
        entries,
        pick,
        empty,
        r,
    );
}

/// A section showing every bundle file `pick` selects, or `empty` when none.
fn text_section(
    body: &mut String,
    (id, label): (&str, &str),
    bundle: Option<&Bundle>,
    entries: &[Entry],
    pick: impl Fn(&str) -> bool,
    empty: &str,
    r: &Render<'_>,
) {
    heading(body, id, label);
    if text_files(body, bundle, entries, pick, r) == 0 {
        none(body, empty);
    }
    end(body);
}

pub(crate) fn screenshots(
    body: &mut String,
    bundle: Option<&Bundle>,
    entries: &[Entry],
    trial: &str,
    images: &mut Vec<Image>,
    r: &Render<'_>,
) {
    heading(body, "screenshots", "Browser screenshots");
    let pngs: Vec<&Entry> = entries.iter().filter(|e| e.rel.ends_with(".png")).collect();
    match bundle {
        _ if pngs.is_empty() => none(body, "No screenshot in the bundle."),
        _ if r.redacted() => none(
            body,
            "Left out of the redacted report: an image cannot be passed through the redaction rules.",
        ),
        None => {}
        Some(b) => {
            for e in pngs {
                if !e.regular || e.size > source::MAX_IMAGE {
                    let _ = writeln!(
                        body,
                        "<p class=\"note\"><code>{}</code>: not a regular file under 8 MiB, not copied.</p>",
                        r.t(&e.rel)
                    );
                    continue;
                }
                let target = format!("assets/{}/{}", slug(trial), slug(&e.rel));
                let _ = writeln!(
                    body,
                    "<figure><img src=\"../{0}\" alt=\"Browser screenshot {1} of cell {2}\" style=\"max-width:100%\"><figcaption><code>{1}</code></figcaption></figure>",
                    r.t(&target),
                    r.t(&e.rel),
                    r.t(trial)
                );
                images.push((b.dir().join(&e.rel), target));
            }
        }
    }
    end(body);
}

pub(crate) fn frames(
    body: &mut String,
    bundle: Option<&Bundle>,
    entries: &[Entry],
    r: &Render<'_>,
) {
    let pick = |p: &str| p.ends_with("frames.jsonl") || p.ends_with("ws-turns.json");
    let empty = "No ACP or WebSocket frames in the bundle (a tmux lane talks to no socket).";
    text_section(
        body,
        ("frames", "ACP/WS frames"),
        bundle,
        entries,
        pick,
        empty,
        r,
    );
}

pub(crate) fn stub(body: &mut String, bundle: Option<&Bundle>, r: &Render<'_>) {
    heading(body, "stub", "Stub provider requests");
    let text = bundle.and_then(|b| source::read_text(&b.dir().join("stub-requests.jsonl")));
    match text {
        None => none(body, "No stub request log in the bundle."),
        Some((text, cut)) => {
            body.push_str("<table><caption>Every request the stub provider served</caption><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Time</th><th scope=\"col\">Request</th><th scope=\"col\">Model</th><th scope=\"col\">Stream</th><th scope=\"col\">Reply (start)</th></tr></thead><tbody>\n");
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else {
                    let _ = writeln!(body, "<tr><td colspan=\"6\">{}</td></tr>", r.t(line));
                    continue;
                };
                let s = |k: &str| {
                    v.get(k)
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                        .unwrap_or_default()
                };
                let reply: String = s("reply").chars().take(160).collect();
                let _ = writeln!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    r.t(&s("seq")),
                    r.t(&s("time")),
                    r.t(&s("method")),
                    r.t(&s("path")),
                    r.t(&s("model")),
                    r.t(&s("stream")),
                    r.t(&reply)
                );
            }
            body.push_str("</tbody></table>\n");
            if cut {
                none(body, "Cut: only the first 256 KiB of the log are shown.");
            }
        }
    }
    end(body);
}

pub(crate) fn arbitration_section(body: &mut String, bundle: Option<&Bundle>, r: &Render<'_>) {
    heading(body, "arbitration", "Arbitration");
    match bundle.and_then(arbitration) {
        None => none(
            body,
            "Not graded: no readable arbitration beside the bundle.",
        ),
        Some(a) => {
            let _ = writeln!(
                body,
                "<p>Council <code>{}</code>, graded {}; {} of {} seat(s) scored; {}.</p>",
                r.t(&a.council),
                r.t(&a.date),
                a.scored_seats(),
                a.seats.len(),
                if a.rejected() {
                    "<strong class=\"failed\">rejected</strong>"
                } else {
                    "not rejected"
                }
            );
            body.push_str("<table><caption>Per criterion: median, spread and the seats more than one point from the median</caption><thead><tr><th scope=\"col\">Criterion</th><th scope=\"col\">Median</th><th scope=\"col\">Spread</th><th scope=\"col\">Scores</th><th scope=\"col\">Disagreeing seats</th></tr></thead><tbody>\n");
            for (id, c) in &a.criteria {
                let scores: Vec<String> =
                    c.scores.iter().map(|(s, v)| format!("{s}: {v}")).collect();
                let _ = writeln!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    r.t(id),
                    c.median
                        .map_or_else(|| "none".to_owned(), |m| m.to_string()),
                    c.spread.map_or_else(|| "–".to_owned(), |s| s.to_string()),
                    r.t(&scores.join(", ")),
                    r.t(&c.disagreeing.join(", "))
                );
            }
            body.push_str("</tbody></table>\n<ul>");
            for s in &a.seats {
                let status = match &s.status {
                    crate::council::SeatStatus::Scored { .. } => "scored".to_owned(),
                    crate::council::SeatStatus::Unscored { reason } => {
                        format!("unscored: {reason}")
                    }
                    crate::council::SeatStatus::Absent { reason } => format!("absent: {reason}"),
                };
                let _ = write!(
                    body,
                    "<li>Seat {} ({}): {}</li>",
                    r.t(&s.id),
                    r.t(&s.model),
                    r.t(&status)
                );
            }
            for j in &a.rejections {
                let _ = write!(
                    body,
                    "<li>reject_if <code>{}</code>: {}</li>",
                    r.t(&j.id),
                    r.t(&j.detail)
                );
            }
            body.push_str("</ul>\n");
        }
    }
    end(body);
}

pub(crate) fn files(body: &mut String, entries: &[Entry], r: &Render<'_>) {
    heading(body, "files", "Files in the bundle");
    if entries.is_empty() {
        none(body, "No bundle.");
    } else {
        body.push_str("<ul>");
        for e in entries {
            let kind = if e.regular {
                format!("{} bytes", e.size)
            } else {
                "not a regular file: not read".to_owned()
            };
            let _ = write!(body, "<li><code>{}</code> ({kind})</li>", r.t(&e.rel));
        }
        body.push_str("</ul>\n");
    }
    end(body);
}
