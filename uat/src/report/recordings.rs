//! A cell page's "Terminal recordings" section: each `screens/*.cast.gz` (or
//! an older bundle's plain `.cast`) of the bundle (one per driven pane,
//! recorded from the tmux control-mode stream) embedded gzipped and base64'd
//! for the vendored player (`player`; `init.js` un-gzips it in the page), with
//! its size, length and a download link. Why gzipped in the page too: a
//! 30-minute session is ~90 MB of cast but a few MiB gzipped, and a `file://`
//! page cannot fetch the file beside it. Left out of the redacted report: a recording's
//! escape sequences can split a secret across output bursts, beyond what the
//! line-based redaction rules can be trusted to catch.

use std::fmt::Write as _;
use std::io::{BufRead as _, Write as _};

use base64::Engine as _;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

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
        .filter(|e| e.rel.ends_with(".cast") || e.rel.ends_with(".cast.gz"))
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
                        "<p class=\"note\">Not a regular file of at most {} MiB: not embedded; it is in the bundle.</p>",
                        MAX_EMBEDDED >> 20
                    );
                    continue;
                }
                let Some(cast) = read_cast(&b.dir().join(&e.rel)) else {
                    body.push_str("<p class=\"note\">Unreadable: not a gzipped or plain asciicast v2 file.</p>\n");
                    continue;
                };
                let header = &cast.header;
                let last = cast.last;
                let target = format!("assets/{}/{}", slug(trial), slug(&e.rel));
                let _ = writeln!(
                    body,
                    "<p>{}×{} pane, {last:.1} s, {} bytes ({} gzipped); <a href=\"../{}\">download the recording</a> (play it with <code>asciinema play</code>{}).</p>",
                    header["width"].as_u64().unwrap_or(0),
                    header["height"].as_u64().unwrap_or(0),
                    cast.plain,
                    cast.gz.len(),
                    r.t(&target),
                    if e.rel.ends_with(".gz") {
                        " after <code>gunzip</code>"
                    } else {
                        ""
                    }
                );
                let _ = writeln!(
                    body,
                    "<div id=\"player-{i}\" role=\"region\" aria-label=\"Terminal recording {}\"></div>\n<pre class=\"cast-data\" data-player=\"player-{i}\" data-encoding=\"gzip+base64\" hidden>{}</pre>",
                    r.t(&e.rel),
                    base64::engine::general_purpose::STANDARD.encode(&cast.gz)
                );
                copies.push((b.dir().join(&e.rel), target));
                player = true;
            }
        }
    }
    body.push_str("</section>\n");
    player
}

/// A recording read for embedding.
struct Cast {
    /// The header line (size, start).
    header: serde_json::Value,
    /// The last event's time, in seconds.
    last: f64,
    /// Bytes of the plain cast.
    plain: u64,
    /// The cast gzipped, as embedded.
    gz: Vec<u8>,
}

/// A `.cast.gz` as it is, or a plain `.cast` gzipped, with its header and
/// length read from the plain text; `None` when unreadable or not gzip. The
/// plain text is streamed line by line, never held whole.
fn read_cast(path: &std::path::Path) -> Option<Cast> {
    let bytes = source::read_bytes(path, MAX_EMBEDDED)?;
    let gzipped = path.extension().is_some_and(|x| x == "gz");
    let gz = if gzipped {
        bytes
    } else {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&bytes).ok()?;
        enc.finish().ok()?
    };
    let mut lines = std::io::BufReader::new(GzDecoder::new(gz.as_slice()));
    let mut line = String::new();
    lines.read_line(&mut line).ok()?;
    let header: serde_json::Value = serde_json::from_str(&line).ok()?;
    let mut plain = line.len() as u64;
    let mut last = 0.0;
    loop {
        line.clear();
        // A corrupt stream ends the walk; the player says what it can play.
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(n) => plain += n as u64,
        }
        if let Some(at) = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v.get(0).and_then(serde_json::Value::as_f64))
        {
            last = at;
        }
    }
    Some(Cast {
        header,
        last,
        plain,
        gz,
    })
}
