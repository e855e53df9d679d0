//! Parsing tmux control-mode (`tmux -C`) output lines.
//!
//! Control mode frames every command reply as `%begin <time> <number> <flags>` …
//! `%end`/`%error` with the same number (flags bit 1 = the command came from this
//! client), and pushes notifications such as `%output %<pane> <bytes>` outside
//! those blocks. Output bytes below 0x20 and the backslash arrive octal-escaped
//! (`\ooo`); everything else is raw. This module only classifies lines and
//! decodes bytes: it keeps no state and starts no processes (see `control`).

/// One line of control-mode output, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// `%begin`: a command reply starts; its header (time, number, flags) is what
    /// the closing line repeats. Flags bit 1: the command came from this client.
    Begin(Header),
    /// `%end` (`error == false`) or `%error` (`error == true`) closing the block
    /// whose `%begin` carried the same header.
    End { header: Header, error: bool },
    /// `%output %<pane> …` or `%extended-output %<pane> <ms> : …`, bytes decoded.
    Output { pane: String, bytes: Vec<u8> },
    /// `%exit [reason]`: the control client is about to exit.
    Exit { reason: Option<String> },
    /// Any other notification (`%session-changed`, `%window-add`, …) or text.
    Other,
}

/// The three numbers of a `%begin`/`%end`/`%error` line. A block ends only at a
/// line repeating its `%begin`'s header exactly: a reply's own lines are pane text
/// (`capture-pane`), and a pane can print `%end <anything>`; matching the number
/// alone let a harness that printed `%end` for every number cut replies short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) time: u64,
    pub(crate) number: u64,
    pub(crate) flags: u64,
}

impl Header {
    /// Whether the command came from this client (flags bit 1).
    pub(crate) fn ours(self) -> bool {
        self.flags & 1 == 1
    }
}

/// Classifies one line (without its trailing newline).
pub(crate) fn parse_line(line: &[u8]) -> Line {
    let Some(rest) = line.strip_prefix(b"%") else {
        return Line::Other;
    };
    let (word, args) = split_word(rest);
    match word {
        b"begin" => block_header(args).map_or(Line::Other, Line::Begin),
        b"end" | b"error" => block_header(args).map_or(Line::Other, |header| Line::End {
            header,
            error: word == b"error",
        }),
        b"output" => {
            let (pane, data) = split_word(args);
            Line::Output {
                pane: String::from_utf8_lossy(pane).into_owned(),
                bytes: decode_octal(data),
            }
        }
        b"extended-output" => {
            // `%extended-output %<pane> <ms-behind> [more args] : <bytes>`
            let (pane, after) = split_word(args);
            match find_sub(after, b" : ") {
                Some(at) => Line::Output {
                    pane: String::from_utf8_lossy(pane).into_owned(),
                    bytes: decode_octal(&after[at + 3..]),
                },
                None => Line::Other,
            }
        }
        b"exit" => Line::Exit {
            reason: (!args.is_empty()).then(|| String::from_utf8_lossy(args).into_owned()),
        },
        _ => Line::Other,
    }
}

/// Decodes tmux's `\ooo` octal escapes; any other byte is kept as is.
pub(crate) fn decode_octal(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        if data[i] == b'\\' && i + 4 <= data.len() && is_octal_triplet(&data[i + 1..i + 4]) {
            let v = (data[i + 1] - b'0') * 64 + (data[i + 2] - b'0') * 8 + (data[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(data[i]);
            i += 1;
        }
    }
    out
}

fn is_octal_triplet(t: &[u8]) -> bool {
    t.len() == 3 && t[0] <= b'3' && t.iter().all(|b| (b'0'..=b'7').contains(b))
}

fn split_word(s: &[u8]) -> (&[u8], &[u8]) {
    match s.iter().position(|&b| b == b' ') {
        Some(at) => (&s[..at], &s[at + 1..]),
        None => (s, &[]),
    }
}

fn block_header(args: &[u8]) -> Option<Header> {
    let text = std::str::from_utf8(args).ok()?;
    let mut parts = text.split(' ');
    let time = parts.next()?.parse().ok()?;
    let number = parts.next()?.parse().ok()?;
    let flags = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some(Header {
        time,
        number,
        flags,
    })
}

fn find_sub(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Quotes `s` as one tmux command-language argument: single quotes, with an
/// embedded `'` written as `'\''` (tmux expands nothing inside single quotes).
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(time: u64, number: u64, flags: u64) -> Header {
        Header {
            time,
            number,
            flags,
        }
    }

    #[test]
    fn begin_and_end_carry_their_whole_header() {
        assert_eq!(
            parse_line(b"%begin 1796011190 269 1"),
            Line::Begin(header(1_796_011_190, 269, 1))
        );
        assert!(header(1, 2, 1).ours() && !header(1, 2, 0).ours());
        assert_eq!(
            parse_line(b"%end 1796011190 269 1"),
            Line::End {
                header: header(1_796_011_190, 269, 1),
                error: false
            }
        );
        assert_eq!(
            parse_line(b"%error 1796011190 270 1"),
            Line::End {
                header: header(1_796_011_190, 270, 1),
                error: true
            }
        );
        assert_eq!(parse_line(b"%end 1796011190 270 1 trailing"), Line::Other);
    }

    #[test]
    fn output_is_octal_decoded() {
        let line = parse_line(b"%output %0 \\015\\012hi\\134there \\033[?2004h\xe2\x9d\xaf");
        assert_eq!(
            line,
            Line::Output {
                pane: "%0".into(),
                bytes: b"\r\nhi\\there \x1b[?2004h\xe2\x9d\xaf".to_vec()
            }
        );
    }

    #[test]
    fn extended_output_is_decoded_after_the_colon() {
        let line = parse_line(b"%extended-output %3 12 : A\\011B\\015\\012");
        assert_eq!(
            line,
            Line::Output {
                pane: "%3".into(),
                bytes: b"A\tB\r\n".to_vec()
            }
        );
    }

    #[test]
    fn a_backslash_not_followed_by_three_octal_digits_is_literal() {
        assert_eq!(decode_octal(b"a\\9b\\"), b"a\\9b\\".to_vec());
        assert_eq!(decode_octal(b"\\01"), b"\\01".to_vec());
        assert_eq!(decode_octal(b"\\0123"), b"\n3".to_vec());
    }

    #[test]
    fn exit_and_unknown_notifications() {
        assert_eq!(parse_line(b"%exit"), Line::Exit { reason: None });
        assert_eq!(
            parse_line(b"%exit server exited"),
            Line::Exit {
                reason: Some("server exited".into())
            }
        );
        assert_eq!(parse_line(b"%session-changed $0 t"), Line::Other);
        assert_eq!(parse_line(b"plain captured text"), Line::Other);
        assert_eq!(parse_line(b"%begin garbage"), Line::Other);
    }

    #[test]
    fn quote_survives_single_quotes_and_specials() {
        assert_eq!(quote("it's $HOME ~ #x; y"), "'it'\\''s $HOME ~ #x; y'");
        assert_eq!(quote(""), "''");
    }
}
