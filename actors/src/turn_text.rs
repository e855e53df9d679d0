//! What a learner turn may contain before anything types it into a terminal.
//!
//! A turn reaches a harness as keystrokes (a tmux pane) or as a paste: a
//! control character in it is not text there but a key (`C-c`, `C-d`, Enter on
//! a CR) or the start of a terminal escape sequence (ESC, or a C1 `CSI`/`OSC`),
//! and a NUL truncates it in every C string on the way. So a turn may hold any
//! printable text plus newline and tab, and nothing else; and it must show
//! something (a whitespace-only or zero-width-only turn types nothing a learner
//! would, and makes an empty submit). The turn-script loader and the pane
//! driver both call [`check`], so a script, a gateway paragraph and a direct
//! model reply are held to the same rule. Pure: no I/O.

use std::fmt;

/// Why a turn's text cannot be typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextFault {
    /// A control character other than newline and tab.
    Control {
        /// The character.
        ch: char,
        /// 1-based line of the text it is on.
        line: usize,
        /// 1-based column (in characters) on that line.
        column: usize,
    },
    /// Nothing visible: empty, whitespace-only or zero-width-only.
    Invisible,
}

impl fmt::Display for TextFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextFault::Control { ch, line, column } => write!(
                f,
                "holds control character {} at line {line}, column {column}; a terminal takes it as a key or an escape sequence, so only printable text, newline and tab are accepted (remove it, or spell it out as visible text)",
                describe(*ch)
            ),
            TextFault::Invisible => f.write_str(
                "is empty, whitespace-only or zero-width-only; a turn must contain visible text (write the learner's words)",
            ),
        }
    }
}

/// Accepts printable text with newlines and tabs that shows at least one
/// visible character; the first offending character otherwise.
pub fn check(text: &str) -> Result<(), TextFault> {
    check_controls(text)?;
    if text.chars().all(is_invisible) {
        return Err(TextFault::Invisible);
    }
    Ok(())
}

/// Accepts text whose only control characters are newline and tab (it may be
/// blank: a harness actor types an empty mentor reply as a bare Enter).
pub(crate) fn check_controls(text: &str) -> Result<(), TextFault> {
    let (mut line, mut column) = (1, 0);
    for ch in text.chars() {
        column += 1;
        if ch == '\n' {
            line += 1;
            column = 0;
            continue;
        }
        if ch != '\t' && is_control(ch) {
            return Err(TextFault::Control { ch, line, column });
        }
    }
    Ok(())
}

/// C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F).
fn is_control(ch: char) -> bool {
    ch.is_control()
}

/// Whitespace, and the characters that render as nothing (Unicode's default
/// ignorable code points plus the blank-looking fillers).
fn is_invisible(ch: char) -> bool {
    ch.is_whitespace()
        || matches!(
            ch,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `U+001B (ESC)`: the code point and, for a control character, its name.
pub fn describe(ch: char) -> String {
    const C0: [&str; 32] = [
        "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
        "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB",
        "ESC", "FS", "GS", "RS", "US",
    ];
    const C1: [&str; 32] = [
        "PAD", "HOP", "BPH", "NBH", "IND", "NEL", "SSA", "ESA", "HTS", "HTJ", "VTS", "PLD", "PLU",
        "RI", "SS2", "SS3", "DCS", "PU1", "PU2", "STS", "CCH", "MW", "SPA", "EPA", "SOS", "SGCI",
        "SCI", "CSI", "ST", "OSC", "PM", "APC",
    ];
    let code = u32::from(ch);
    let name = match code {
        0..=0x1F => C0.get(code as usize).copied(),
        0x7F => Some("DEL"),
        0x80..=0x9F => C1.get((code - 0x80) as usize).copied(),
        _ => None,
    };
    match name {
        Some(name) => format!("U+{code:04X} ({name})"),
        None => format!("U+{code:04X}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_newlines_and_tabs_pass() {
        for ok in [
            "hello",
            "line one\n\nline three\trun-shell touch /tmp/x",
            "a;b \"c\" 'd' \\e #{pane_id} $HOME ~ {x} %if ;",
            "zero\u{200B}width inside visible text",
            "ünïcödé 日本語 🙂",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn every_c0_c1_and_del_except_newline_and_tab_is_named() {
        let controls = (0u32..0x20).chain([0x7F]).chain(0x80..0xA0);
        for code in controls.filter(|c| *c != 0x0A && *c != 0x09) {
            let ch = char::from_u32(code).unwrap();
            let text = format!("ok\nab{ch}c");
            let fault = check(&text).unwrap_err();
            assert_eq!(
                fault,
                TextFault::Control {
                    ch,
                    line: 2,
                    column: 3
                }
            );
            let shown = fault.to_string();
            assert!(shown.contains(&format!("U+{code:04X} (")), "{shown}");
            assert!(shown.contains("line 2, column 3"), "{shown}");
        }
        assert!(
            check("\u{1b}]52;c;aGk=\u{7}")
                .unwrap_err()
                .to_string()
                .contains("(ESC)")
        );
        assert!(
            check("x\u{9d}0;t\u{9c}")
                .unwrap_err()
                .to_string()
                .contains("(OSC)")
        );
        assert!(check("nul\0").unwrap_err().to_string().contains("(NUL)"));
    }

    #[test]
    fn invisible_turns_are_refused() {
        for bad in [
            "",
            "   ",
            "\n\n\t",
            "\u{200B}\u{200C}\u{200D}",
            "\u{FEFF}",
            " \u{2060} \u{3000}\u{2800}",
            "\u{E0041}\u{E0042}",
        ] {
            assert_eq!(check(bad), Err(TextFault::Invisible), "{bad:?}");
        }
        assert!(TextFault::Invisible.to_string().contains("visible text"));
    }
}
