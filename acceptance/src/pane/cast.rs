//! An asciinema v2 recording (`.cast`) of one pane, built from the same tmux
//! control-mode `%output` stream the driver waits on (never re-captured): a
//! header line with the pane size and start time, then one `[seconds, "o",
//! text]` line per output burst with its arrival time since the driver
//! attached. A player replays it with the original timing.
//!
//! Output is kept from the start (a terminal recording replayed from the
//! middle is garbage) up to [`CAST_CAP`] bytes; past it the recording stops
//! and the header's `title` says it was cut. A UTF-8 sequence split across two
//! bursts is carried to the next one, so no character is mangled at the seam.

use std::time::{Duration, Instant};

/// The most output bytes a cast holds (a lane minute is tens of KiB).
pub(crate) const CAST_CAP: usize = 8 << 20;

/// A recording in progress.
#[derive(Debug, Clone)]
pub(crate) struct Cast {
    start: Instant,
    started_unix: i64,
    events: Vec<(Duration, String)>,
    raw: Vec<u8>,
    carry: Vec<u8>,
    bytes: usize,
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
            carry: Vec::new(),
            bytes: 0,
            cut: false,
        }
    }

    /// Adds a burst of output that arrived at `at`.
    pub fn push(&mut self, at: Instant, bytes: &[u8]) {
        if self.cut {
            return;
        }
        if self.bytes + bytes.len() > CAST_CAP {
            self.cut = true;
            return;
        }
        self.bytes += bytes.len();
        self.raw.extend_from_slice(bytes);
        let mut all = std::mem::take(&mut self.carry);
        all.extend_from_slice(bytes);
        // Hold back an incomplete UTF-8 sequence at the end for the next burst.
        let keep = incomplete_tail(&all);
        self.carry = all.split_off(all.len() - keep);
        if all.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&all).into_owned();
        self.events
            .push((at.saturating_duration_since(self.start), text));
    }

    /// The `.cast` file for a pane of `size` (columns, rows).
    pub(crate) fn to_asciicast(&self, size: (u16, u16)) -> Vec<u8> {
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
        let mut out = header.to_string();
        out.push('\n');
        for (at, text) in &self.events {
            let line = serde_json::json!([at.as_secs_f64(), "o", text]);
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out.into_bytes()
    }

    /// The recorded output bytes, as they arrived.
    pub fn bytes(&self) -> &[u8] {
        &self.raw
    }

    /// Output bytes recorded so far.
    pub fn len(&self) -> usize {
        self.bytes
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
