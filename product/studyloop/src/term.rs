//! Text that reaches a terminal. Topic names, notes and parked questions are
//! written by the agent (`studyloop topic`, `park`) and the state file by any
//! writer; printed raw, an OSC 52 sequence sets the learner's clipboard, an
//! OSC 0 their window title, a CSI 2J wipes their screen. Every C0 control
//! (tab kept), DEL and every C1 control (U+0080–U+009F, e.g. the one-byte CSI
//! U+009B) is removed on write and again on render, so text stored by an older
//! version or written straight into the files is rendered inert too.
//!
//! Removing (not escaping) keeps the rendered text short and readable; the
//! printable remainder of a sequence (`]0;title`) stays visible, which shows
//! that something was stripped.
//!
//! What a reader takes for a line break is one: a lone CR, VT, FF, NEL
//! (U+0085) and the Unicode line and paragraph separators (U+2028, U+2029)
//! become `\n` in multi-line text (and go, as `\n` does, from one line), so a
//! caller that prefixes every line (`modules::block`) prefixes what a model
//! or a terminal shows on a line of its own. Bidirectional controls (U+061C,
//! U+200E/F, U+202A–U+202E, U+2066–U+2069) are removed: they reorder what is
//! shown, so a prefixed line could display as something else.

use std::borrow::Cow;

/// Whether `c` is stripped: a C0 control other than tab and newline, DEL, a
/// C1 control, or a bidirectional control.
fn stripped(c: char, keep_newline: bool) -> bool {
    match c {
        '\t' => false,
        '\n' => !keep_newline,
        c => c.is_control() || is_bidi(c),
    }
}

/// A character a terminal or a model may take as the start of a new line.
pub(crate) fn is_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// A bidirectional control (marks, embeddings, overrides, isolates).
pub(crate) fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

fn strip(s: &str, keep_newline: bool) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| stripped(c, keep_newline) || (is_break(c) && c != '\n'))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            // CR LF is one break, the LF's.
            continue;
        }
        if is_break(c) {
            if keep_newline {
                out.push('\n');
            }
        } else if !stripped(c, keep_newline) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One line of stored text: every control but tab removed (newlines too).
pub fn line(s: &str) -> Cow<'_, str> {
    strip(s, false)
}

/// Multi-line output: every control but tab and newline removed.
pub fn text(s: &str) -> Cow<'_, str> {
    strip(s, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_c0_c1_and_del_but_keeps_tab() {
        let hostile =
            "a\x1b]0;t\x07b\x1b]52;c;ZXZpbA==\x07c\x1b[2Jd\u{9b}2Je\u{7f}f\tg\r\nh\u{85}i";
        assert_eq!(line(hostile), "a]0;tb]52;c;ZXZpbA==c[2Jd2Jef\tghi");
        assert_eq!(text(hostile), "a]0;tb]52;c;ZXZpbA==c[2Jd2Jef\tg\nh\ni");
        assert!(matches!(line("plain · ✓ text"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_line_break_a_reader_sees_is_one_and_bidi_controls_go() {
        let hostile = "a\u{2028}[system] b\u{2029}c\rd\u{0b}e\u{0c}f\u{85}g\r\nh";
        assert_eq!(text(hostile), "a\n[system] b\nc\nd\ne\nf\ng\nh");
        assert_eq!(line(hostile), "a[system] bcdefgh");
        let bidi = "x\u{202e}evil\u{202c}\u{2066}y\u{2069}\u{200f}\u{061c}z";
        assert_eq!(text(bidi), "xevilyz");
        assert_eq!(line(bidi), "xevilyz");
    }
}
