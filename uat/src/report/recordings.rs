//! A cell page's "Terminal recordings" section: each `screens/*.cast` of the
//! bundle (one per driven pane, recorded from the tmux control-mode stream)
//! embedded as escaped text for the vendored player (`player`), with its size,
//! length and a download link. Left out of the redacted report: a recording's
//! escape sequences can split a secret across output bursts, beyond what the
//! line-based redaction rules can be trusted to catch.

use std::fmt::Write as _;

use super::cell::Image;
use super::html::{Render, slug};
use super::player::MAX_EMBEDDED;
use super::source::{self, Entry};
use crate::bundle::Bundle;

/// Writes the section; returns whether the page needs the player.
pub(crate) fn section(
    body: &mut String,
    bundle: Option<&Bundle>,
    entries: &[Entry],
    trial: &str,
    copies: &mut Vec<Image>,
    r: &Render<'_>,
) -> bool {
    body.push_str("<section aria-labelledby=\"h-casts\">\n<h2 id=\"h-casts\"><a id=\"casts\"></a>Terminal recordings</h2>\n");
    let casts: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.rel.ends_with(".cast"))
        .collect();
    let mut player = false;
    let pane = trial.starts_with("cli-tmux::");
    match bundle {
        None => {
            body.push_str("<p class=\"note\">No bundle, so no recording: the cell did not run or wrote no bundle (its attempts above say which).</p>\n");
        }
        _ if casts.is_empty() && pane => {
            body.push_str("<p class=\"note\">No pane recording in the bundle, although this cell drives a tmux pane: the recorder wrote none.</p>\n");
        }
        _ if casts.is_empty() => {
            body.push_str("<p class=\"note\">No pane recording in the bundle (a web or probe cell drives no pane).</p>\n");
        }
        _ if r.redacted() => {
            body.push_str("<p class=\"note\">Left out of the redacted report: a terminal recording cannot be trusted to pass the redaction rules.</p>\n");
        }
        Some(b) => {
            for (i, e) in casts.iter().enumerate() {
                let _ = writeln!(body, "<h3><code>{}</code></h3>", r.t(&e.rel));
                if !e.regular || e.size > MAX_EMBEDDED {
                    let _ = writeln!(
                        body,
                        "<p class=\"note\">Not a regular file under 4 MiB: not embedded; it is in the bundle.</p>"
                    );
                    continue;
                }
                let Some((text, _)) = source::read_text(&b.dir().join(&e.rel)) else {
                    body.push_str("<p class=\"note\">Unreadable.</p>\n");
                    continue;
                };
                let header: serde_json::Value = text
                    .lines()
                    .next()
                    .and_then(|l| serde_json::from_str(l).ok())
                    .unwrap_or_default();
                let last = text
                    .lines()
                    .last()
                    .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .and_then(|v| v.get(0).and_then(serde_json::Value::as_f64))
                    .unwrap_or(0.0);
                let target = format!("assets/{}/{}", slug(trial), slug(&e.rel));
                let _ = writeln!(
                    body,
                    "<p>{}×{} pane, {last:.1} s, {} bytes; <a href=\"../{}\">download the .cast</a> (play it with <code>asciinema play</code>).</p>",
                    header["width"].as_u64().unwrap_or(0),
                    header["height"].as_u64().unwrap_or(0),
                    e.size,
                    r.t(&target)
                );
                let _ = writeln!(
                    body,
                    "<div id=\"player-{i}\" role=\"region\" aria-label=\"Terminal recording {}\"></div>\n<pre class=\"cast-data\" data-player=\"player-{i}\" hidden>{}</pre>",
                    r.t(&e.rel),
                    r.t(&text)
                );
                copies.push((b.dir().join(&e.rel), target));
                player = true;
            }
        }
    }
    body.push_str("</section>\n");
    player
}
