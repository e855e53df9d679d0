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

use std::borrow::Cow;

/// Whether `c` is stripped: a C0 control other than tab and newline, DEL, or a
/// C1 control.
fn stripped(c: char, keep_newline: bool) -> bool {
    match c {
        '\t' => false,
        '\n' => !keep_newline,
        c => c.is_control(),
    }
}

fn strip(s: &str, keep_newline: bool) -> Cow<'_, str> {
    if s.chars().any(|c| stripped(c, keep_newline)) {
        Cow::Owned(s.chars().filter(|c| !stripped(*c, keep_newline)).collect())
    } else {
        Cow::Borrowed(s)
    }
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
        assert_eq!(text(hostile), "a]0;tb]52;c;ZXZpbA==c[2Jd2Jef\tg\nhi");
        assert!(matches!(line("plain · ✓ text"), Cow::Borrowed(_)));
    }
}
