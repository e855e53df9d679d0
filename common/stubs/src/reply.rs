//! The stub provider's reply contract: which user text counts as a real turn, the
//! per-turn nonce, the persona marker and the `MENTOR-REPLY` line built from them.
//!
//! Drivers link these functions to check what reached the screen (the nonce for
//! turn `n` under the run seed) without re-implementing the rules. This module is
//! pure: no I/O, no protocol shapes (those live in `provider`).

use sha2::{Digest, Sha256};

/// Text blocks whose trimmed text starts with one of these are harness
/// boilerplate, not something the learner typed: `<system-reminder>`,
/// `<environment_context>` and other XML-ish wrappers (`<`), the codex `AGENTS.md`
/// preamble, and Claude Code's `Caveat:` block before local-command output.
pub(crate) const BOILERPLATE_PREFIXES: [&str; 3] = ["<", "# AGENTS.md", "Caveat:"];

/// How many leading words of the last real user text the reply echoes.
pub(crate) const ECHO_WORDS: usize = 8;

/// The marker the product's persona (and any system prompt) carries; the stub
/// reports the word after it as ` [persona=<word>]`.
pub(crate) const PERSONA_MARKER: &str = "PERSONA=";

/// What the reply says when a request holds no real user text at all.
pub(crate) const NO_USER_TEXT: &str = "(no user text)";

/// The nonce for real user turn `n` of a run with `seed`: the first 8 lowercase
/// hex digits of `sha256("<seed>:<n>")`.
///
/// It lets a driver prove the model's reply for *this* turn was rendered (an
/// echo of the learner's words or a spinner cannot contain it).
pub fn nonce(seed: u64, n: u64) -> String {
    let digest = Sha256::digest(format!("{seed}:{n}").as_bytes());
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of `text` as lowercase hex (the request log's `user_text_sha256`).
pub fn text_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether one text block is harness boilerplate rather than learner text: it is
/// blank after trimming, or starts with one of [`BOILERPLATE_PREFIXES`].
pub fn is_boilerplate(text: &str) -> bool {
    let trimmed = text.trim();
    trimmed.is_empty() || BOILERPLATE_PREFIXES.iter().any(|p| trimmed.starts_with(p))
}

/// The real user text of one user message, given its text blocks in order: the
/// **last** block that is not boilerplate, trimmed; `None` when every block is.
///
/// A user message with no real text (only a `<system-reminder>`, only tool
/// results) is not a user turn. Harnesses put their wrappers before the typed
/// prompt in the same message, so the last real block is what the learner typed.
pub fn real_user_text<'a, I>(blocks: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    blocks
        .into_iter()
        .filter(|b| !is_boilerplate(b))
        .last()
        .map(str::trim)
}

/// The first persona word in `request_text`: the run of `[A-Za-z0-9_-]` right
/// after the first [`PERSONA_MARKER`] that has at least one such character.
pub fn persona(request_text: &str) -> Option<&str> {
    let mut rest = request_text;
    while let Some(at) = rest.find(PERSONA_MARKER) {
        let after = &rest[at + PERSONA_MARKER.len()..];
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(after.len());
        if len > 0 {
            return Some(&after[..len]);
        }
        rest = after;
    }
    None
}

/// The first [`ECHO_WORDS`] whitespace-separated words of `text`, single-spaced.
pub(crate) fn first_words(text: &str) -> String {
    text.split_whitespace()
        .take(ECHO_WORDS)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The stub's token count for a text: one token per whitespace-separated word.
///
/// Deliberately simple so a test can predict usage exactly; every protocol's
/// usage fields are computed with it (see `provider` for which texts count).
pub fn count_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// The default (mentor) reply:
/// `MENTOR-REPLY <n> <nonce>: <first 8 words of last real user text>` plus
/// ` [persona=<word>]` when the request carried a persona marker.
pub fn mentor_reply(
    seed: u64,
    n: u64,
    last_user_text: Option<&str>,
    persona: Option<&str>,
) -> String {
    let words = match last_user_text {
        Some(text) => first_words(text),
        None => NO_USER_TEXT.to_owned(),
    };
    let mut reply = format!("MENTOR-REPLY {n} {}: {words}", nonce(seed, n));
    if let Some(word) = persona {
        reply.push_str(" [persona=");
        reply.push_str(word);
        reply.push(']');
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_is_first_eight_hex_of_sha256_of_seed_colon_n() {
        // sha256("0:1") = ef134f2a...; computed independently with `printf 0:1 | sha256sum`.
        assert_eq!(nonce(0, 1), "ef134f2a");
        assert_eq!(nonce(0, 1).len(), 8);
        assert_ne!(nonce(0, 1), nonce(0, 2));
        assert_ne!(nonce(0, 1), nonce(1, 1));
    }

    #[test]
    fn boilerplate_blocks_are_not_real_user_text() {
        for text in [
            "<system-reminder>x</system-reminder>",
            "  <environment_context>cwd</environment_context>",
            "# AGENTS.md instructions for /w",
            "Caveat: the messages below were generated",
            "   ",
            "",
        ] {
            assert!(is_boilerplate(text), "{text:?}");
        }
        assert!(!is_boilerplate("hello <b>mentor</b>"));
        assert!(!is_boilerplate(
            "Caveats are fine mid-word? no: 'Caveat' without colon"
        ));
    }

    #[test]
    fn real_user_text_is_last_non_boilerplate_block_trimmed() {
        let blocks = [
            "<environment_context>x</environment_context>",
            "  first  ",
            "<system-reminder>r</system-reminder>",
        ];
        assert_eq!(real_user_text(blocks), Some("first"));
        assert_eq!(real_user_text(["a", "b"]), Some("b"));
        assert_eq!(real_user_text(["<only wrapper>"]), None);
        assert_eq!(real_user_text(Vec::<&str>::new()), None);
    }

    #[test]
    fn persona_takes_the_first_non_empty_word() {
        assert_eq!(
            persona("<!-- PERSONA=studyloop-study -->"),
            Some("studyloop-study")
        );
        assert_eq!(persona("PERSONA= then PERSONA=owl_2."), Some("owl_2"));
        assert_eq!(persona("no marker here"), None);
        assert_eq!(persona("PERSONA="), None);
    }

    #[test]
    fn mentor_reply_echoes_eight_words_and_persona() {
        let reply = mentor_reply(
            7,
            2,
            Some("one two three four five six seven eight nine"),
            Some("owl"),
        );
        assert_eq!(
            reply,
            format!(
                "MENTOR-REPLY 2 {}: one two three four five six seven eight [persona=owl]",
                nonce(7, 2)
            )
        );
        let empty = mentor_reply(7, 0, None, None);
        assert_eq!(
            empty,
            format!("MENTOR-REPLY 0 {}: (no user text)", nonce(7, 0))
        );
    }

    #[test]
    fn tokens_are_whitespace_words() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("  a  b\nc\t"), 3);
    }
}
