//! The screen extractor for harnesses without a usable session store: the
//! reply block after the learner's echo, with the TUI's chrome (input box
//! borders, status lines, spinners, its reply bullet and margin) removed and
//! the lines the TUI wrapped rejoined. The chrome is data, declared per
//! harness in the harness table ([`Chrome`]) and measured on the pinned
//! version (sample: `acceptance/tests/data/transcript/grok-0.0.34-screen.txt`).
//!
//! Rejoining: a line ended by the TUI's word wrap is one whose next word would
//! not have fit in the text width (estimated from the widest line on screen,
//! the full-width border or status line, less the chrome's right margin);
//! list items, headings and code lines are never joined.

use regex::Regex;

use crate::pane::screen::{echo_probe, squash};

pub use crate::harness_spec::reply_source::{Chrome, GROK, UNMEASURED};

/// Display columns of `c`: 2 for East Asian wide and fullwidth characters
/// (CJK, Hangul, kana, fullwidth forms, most emoji), 0 for combining marks,
/// else 1 — what a terminal allots, so wrap widths can be compared.
pub(crate) fn char_width(c: char) -> usize {
    let u = u32::from(c);
    match u {
        0x0300..=0x036F | 0x200B..=0x200F | 0xFE00..=0xFE0F => 0,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

/// Display columns of `s`.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn compile(pattern: &str) -> Option<Regex> {
    (!pattern.is_empty())
        .then(|| Regex::new(pattern).ok())
        .flatten()
}

fn starts_block(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(['#', '*', '-', '+', '•', '>', '|'])
        || t.starts_with("```")
        || t.split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The reply to `prompt` on `screen` under `chrome`, or `None` when the echo
/// is not on screen or no reply line follows it.
pub(crate) fn extract(chrome: &Chrome, screen: &str, prompt: &str) -> Option<String> {
    let probe = echo_probe(prompt);
    let end = compile(chrome.end);
    let noise = compile(chrome.noise);
    let lines: Vec<&str> = screen.lines().collect();
    // The last echo of this prompt (history above may hold the same words)
    // that a reply follows: a reply quoting the prompt is not its echo.
    let echo = (0..lines.len()).rev().find(|&i| {
        let l = lines[i];
        !probe.is_empty()
            && l.trim_start().starts_with(chrome.echo_prefix)
            && squash(l).contains(&probe)
            && lines[i + 1..]
                .iter()
                .find(|n| !n.trim().is_empty())
                .is_some_and(|n| n.trim_start().starts_with(chrome.reply_bullet))
    })?;
    let text_width = lines
        .iter()
        .map(|l| width(l.trim_end()))
        .max()
        .unwrap_or(0)
        .saturating_sub(chrome.right_margin);
    let mut body: Vec<&str> = Vec::new();
    for line in &lines[echo + 1..] {
        if end.as_ref().is_some_and(|r| r.is_match(line)) {
            break;
        }
        if noise.as_ref().is_some_and(|r| r.is_match(line)) {
            continue;
        }
        body.push(line);
    }
    let first = body.iter().position(|l| !l.trim().is_empty())?;
    let body = &body[first..];
    let bullet_line = body[0].trim_start();
    let head = bullet_line
        .strip_prefix(chrome.reply_bullet)
        .unwrap_or(bullet_line);
    // The reply's left margin: where its first line's text starts.
    let margin = width(body[0]) - width(head);
    let mut out: Vec<String> = vec![head.trim_end().to_owned()];
    let mut in_code = head.trim_start().starts_with("```");
    let mut prev_width = width(body[0].trim_end());
    for line in &body[1..] {
        let cut = line
            .char_indices()
            .take_while(|(i, c)| *c == ' ' && *i < margin)
            .count();
        let text = line[cut..].trim_end();
        let fence = text.trim_start().starts_with("```");
        let next_word = text.split_whitespace().next().map_or(0, width);
        let wrapped = !in_code
            && !text.is_empty()
            && !starts_block(text)
            && out.last().is_some_and(|l| !l.is_empty())
            && prev_width + 1 + next_word > text_width;
        if wrapped && let Some(last) = out.last_mut() {
            last.push(' ');
            last.push_str(text.trim_start());
        } else {
            out.push(text.to_owned());
        }
        if fence {
            in_code = !in_code;
        }
        prev_width = width(line.trim_end());
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    Some(out.join("\n"))
}
