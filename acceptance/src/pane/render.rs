//! A pane's screen rendered from its recorded output stream by a terminal
//! emulator (`vt100`): what the pane showed after the bytes tmux pushed, with
//! no second look at the pane. Evidence screens rendered this way cannot
//! disagree with the recording the report plays.

/// The text screen after `bytes` on a pane of `size` (columns, rows),
/// trailing blank lines dropped.
pub fn render(bytes: &[u8], size: (u16, u16)) -> String {
    let nonzero = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
    let mut parser = vt100::Parser::new(nonzero(size.1), nonzero(size.0), 0);
    parser.process(bytes);
    let mut text = parser.screen().contents();
    let kept = text.trim_end_matches(['\n', ' ']).len();
    text.truncate(kept);
    text
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn escape_sequences_move_the_cursor_and_clear_like_a_terminal() {
        let bytes = b"old line\r\n\x1b[2J\x1b[H\x1b[1mREADY\x1b[0m\r\n> \x1b[5Cright";
        assert_eq!(render(bytes, (40, 5)), "READY\n>      right");
        // A line the pane wrapped reads joined, as `capture-pane -J` gives it.
        assert_eq!(render(b"abcdef", (4, 3)), "abcdef");
        assert_eq!(render(b"abcd\r\nef", (4, 3)), "abcd\nef");
    }
}
