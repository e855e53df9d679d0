//! An asciinema v2 recording (`.cast`) of one pane, built from the same tmux
//! control-mode `%output` stream the driver waits on (never re-captured): a
//! header line with the pane size and start time, then one `[seconds, "o",
//! text]` line per output burst with its arrival time since the driver
//! attached. A player replays it with the original timing. The bundle holds it
//! gzipped (`screens/<phase>.cast.gz`, [`Cast::to_asciicast_gz`]): a pane's
//! output is mostly the same screen redrawn, so it compresses well.
//!
//! Output is kept from the start (a terminal recording replayed from the
//! middle is garbage) up to [`CAST_CAP`] bytes; past it the recording stops
//! and the header's `title` says it was cut. A UTF-8 sequence split across two
//! bursts is carried to the next one, so no character is mangled at the seam.

use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;

/// The most output bytes a cast holds: a 30-minute session of the busiest
/// harness at its busiest measured rate. A TUI redraws its screen for every spinner
/// tick and streamed token, so a pane minute is megabytes, not kilobytes. Measured on
/// the pinned harnesses' lane casts (fresh-clone CI run, 2026-12-02; docs/notes/report.md):
/// codex 2.1-2.9 MB/min in a session and 4.26 MB/min at its busiest (the study arc's
/// first day), grok 1.1-2.6, pi 0.8-1.8, opencode 0.24-0.43, claude 0.12-0.34; so 30
/// codex minutes at 4.26 MB/min ≈ 128 MB.
pub const CAST_CAP: usize = 128 << 20;

/// The most bytes a bundle's gzipped cast (`.cast.gz`) is budgeted, and the
/// most a report embeds to play in the page (past it, the page links the
/// file). Sized from the measured casts, not a synthetic one: real TUI output
/// gzips 3.9-5.3× for codex (grok 22-34×, pi 14-19×, opencode 8-15×, claude 2.3-3.1×,
/// whose output is small), so a full [`CAST_CAP`] of codex output is ≈ 25-33 MB
/// gzipped; a synthetic redraw loop gzips 88× and would mislead.
pub const CAST_GZ_BUDGET: u64 = 32 << 20;

/// A recording in progress.
#[derive(Debug, Clone)]
pub struct Cast {
    start: Instant,
    started_unix: i64,
    /// Each burst's arrival and where its text ends in `raw`. Why offsets, not
    /// strings: the text is `raw` again, and at [`CAST_CAP`] a second copy is
    /// another 96 MiB per pane.
    events: Vec<(Duration, usize)>,
    raw: Vec<u8>,
    /// Bytes at the end of `raw` that start a UTF-8 sequence not yet complete.
    carry: usize,
    cut: bool,
}

impl Cast {
    /// A recording starting now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            started_unix: jiff::Timestamp::now().as_second(),
            events: Vec::new(),
            raw: Vec::new(),
            carry: 0,
            cut: false,
        }
    }

    /// Adds a burst of output that arrived at `at`.
    pub fn push(&mut self, at: Instant, bytes: &[u8]) {
        if self.cut {
            return;
        }
        if self.raw.len() + bytes.len() > CAST_CAP {
            self.cut = true;
            return;
        }
        self.raw.extend_from_slice(bytes);
        // Hold back an incomplete UTF-8 sequence at the end for the next burst.
        let keep = incomplete_tail(&self.raw[self.raw.len() - (self.carry + bytes.len())..]);
        self.carry = keep;
        let end = self.raw.len() - keep;
        if end == self.events.last().map_or(0, |e| e.1) {
            return;
        }
        self.events
            .push((at.saturating_duration_since(self.start), end));
    }

    /// The `.cast` file for a pane of `size` (columns, rows).
    pub fn to_asciicast(&self, size: (u16, u16)) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write_asciicast(size, &mut out);
        out
    }

    /// The `.cast` file gzipped, as the bundle holds it. Streamed into the
    /// encoder line by line, so the plain text (up to [`CAST_CAP`] and more
    /// with JSON escapes) never sits in memory whole.
    pub fn to_asciicast_gz(&self, size: (u16, u16)) -> Vec<u8> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        // Writing to a Vec cannot fail, so neither can the encoder over it.
        let _ = self.write_asciicast(size, &mut gz);
        gz.finish().unwrap_or_default()
    }

    fn write_asciicast(
        &self,
        size: (u16, u16),
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        let mut header = serde_json::json!({
            "version": 2,
            "width": size.0,
            "height": size.1,
            "timestamp": self.started_unix,
            "env": {"TERM": "xterm-256color"},
        });
        if self.cut {
            header["title"] = serde_json::json!(format!(
                "cut: the pane wrote more than {CAST_CAP} bytes; the rest is in the stream log's tail"
            ));
        }
        writeln!(out, "{header}")?;
        let mut start = 0;
        for (at, end) in &self.events {
            let text = String::from_utf8_lossy(&self.raw[start..*end]);
            writeln!(out, "{}", serde_json::json!([at.as_secs_f64(), "o", text]))?;
            start = *end;
        }
        out.flush()
    }

    /// The recorded output bytes, as they arrived.
    pub fn bytes(&self) -> &[u8] {
        &self.raw
    }

    /// Output bytes recorded so far.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
}

impl Default for Cast {
    fn default() -> Self {
        Self::new()
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 sequence that is not
/// yet complete (0 when it ends on a boundary or the tail is invalid anyway).
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: look further back
        }
        let need = match b {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return 0,
        };
        return if back < need { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cast_is_asciicast_v2_with_timing_size_and_whole_characters() {
        let mut cast = Cast::new();
        let t0 = cast.start;
        let arrow = "→".as_bytes(); // three bytes, split across two bursts
        cast.push(t0 + Duration::from_millis(250), b"\x1b[1mhi ");
        cast.push(t0 + Duration::from_millis(500), &arrow[..1]);
        cast.push(
            t0 + Duration::from_millis(750),
            &[&arrow[1..], b"\"q\"\n"].concat(),
        );
        let text = String::from_utf8(cast.to_asciicast((120, 40))).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(
            (lines[0]["width"].clone(), lines[0]["height"].clone()),
            (120.into(), 40.into())
        );
        assert_eq!(lines.len(), 3, "the split arrow is one event: {text}");
        assert_eq!(lines[1], serde_json::json!([0.25, "o", "\u{1b}[1mhi "]));
        assert_eq!(lines[2], serde_json::json!([0.75, "o", "→\"q\"\n"]));
        assert_eq!(cast.len(), 7 + 3 + 4);
    }

    /// Issue 28: the bundle's `.cast.gz` is the cast, byte for byte, and the
    /// offsets kept instead of strings still split events where bursts arrived.
    #[test]
    fn the_gzipped_cast_is_the_plain_cast() {
        use std::io::Read as _;
        let mut cast = Cast::new();
        let t0 = cast.start;
        for i in 0..500u64 {
            let frame = format!("\x1b[H\x1b[2Kframe {i} ▒▒▒ {}\r\n", "x".repeat(100));
            cast.push(t0 + Duration::from_millis(i * 100), frame.as_bytes());
        }
        let gz = cast.to_asciicast_gz((120, 40));
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_end(&mut plain)
            .unwrap();
        assert_eq!(plain, cast.to_asciicast((120, 40)));
        assert!(
            gz.len() * 10 < plain.len(),
            "{} -> {}",
            plain.len(),
            gz.len()
        );
        let text = String::from_utf8(plain).unwrap();
        assert_eq!(text.lines().count(), 501);
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last[0], 49.9);
        assert!(
            last[2]
                .as_str()
                .unwrap()
                .starts_with("\u{1b}[H\u{1b}[2Kframe 499 ▒▒▒")
        );
    }

    #[test]
    fn past_the_cap_the_recording_stops_and_says_so() {
        let mut cast = Cast::new();
        let big = vec![b'x'; CAST_CAP / 2 + 1];
        cast.push(Instant::now(), &big);
        cast.push(Instant::now(), &big);
        let text = String::from_utf8(cast.to_asciicast((80, 24))).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(
            text.lines().next().unwrap().contains("\"title\":\"cut:"),
            "{text}"
        );
        assert_eq!(incomplete_tail(b"ok"), 0);
        assert_eq!(incomplete_tail(&[0xe2, 0x86]), 2);
        assert_eq!(incomplete_tail(&[0xff]), 0);
    }
}
