//! The one escaping function for text placed into HTML or XML (the run report,
//! the JUnit file): every character that can end a text node or an attribute
//! value becomes an entity, and characters XML 1.0 forbids (C0 controls other
//! than tab, newline and carriage return, lone surrogates cannot occur in a
//! `str`, U+FFFE/U+FFFF) become U+FFFD, so hostile transcript or failure text
//! can neither open a tag nor make the file unparseable.

/// `text` safe inside an HTML/XML text node or a double- or single-quoted
/// attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push('\u{fffd}');
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_characters_and_forbidden_controls_never_pass_through() {
        let hostile =
            "</textarea><script>alert('x')</script>&amp; \"q\" \u{0}\u{1b}[31m\u{7f}\u{ffff}\tok\n";
        let out = escape(hostile);
        for bad in ['<', '>', '"', '\'', '\u{0}', '\u{1b}', '\u{7f}', '\u{ffff}'] {
            assert!(!out.contains(bad), "{bad:?} passed through: {out}");
        }
        assert_eq!(
            out,
            "&lt;/textarea&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp; &quot;q&quot; \u{fffd}\u{fffd}[31m\u{fffd}\u{fffd}\tok\n"
        );
        assert_eq!(escape("plain ünïcode"), "plain ünïcode");
    }
}
