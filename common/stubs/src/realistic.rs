//! The stub's realistic mentor reply: 5–40 lines of Markdown a real mentor
//! might write (a heading, paragraphs, a bullet list, a fenced code block, one
//! line longer than any pane is wide, accents, arrows and CJK), deterministic
//! from the run seed and the turn, so lanes meet what real models send while a
//! rerun with the same seed sends the same bytes.
//!
//! The first line is the per-turn marker `MENTOR-REPLY <n> <nonce>: <w1> <w2>`
//! on its own short line (at most [`MARKER_WORDS`] words of the learner's text,
//! each cut to [`MARKER_WORD_CHARS`] characters) so it survives any TUI's
//! wrapping and still proves display per turn. Pure: no I/O.

use sha2::{Digest, Sha256};

use crate::reply::{NO_USER_TEXT, nonce};

/// Learner words the marker line echoes (the screen proof matches two).
pub(crate) const MARKER_WORDS: usize = 2;
/// A longer echoed word is cut to this many characters (the marker stays short).
pub(crate) const MARKER_WORD_CHARS: usize = 24;
/// The one long line is at least this many characters: wider than any pane
/// the lanes open (200 columns) so every harness must wrap or scroll it.
pub(crate) const LONG_LINE_MIN_CHARS: usize = 260;

/// The per-turn marker line of a realistic reply.
pub fn marker_line(seed: u64, n: u64, last_user_text: Option<&str>) -> String {
    let words: Vec<String> = match last_user_text {
        Some(text) => text
            .split_whitespace()
            .take(MARKER_WORDS)
            .map(|w| w.chars().take(MARKER_WORD_CHARS).collect())
            .collect(),
        None => vec![NO_USER_TEXT.to_owned()],
    };
    format!("MENTOR-REPLY {n} {}: {}", nonce(seed, n), words.join(" "))
}

/// A deterministic byte stream from `sha256(seed:n:realistic:<block>)`.
struct Dice {
    seed: u64,
    n: u64,
    block: u64,
    pool: Vec<u8>,
}

impl Dice {
    fn new(seed: u64, n: u64) -> Self {
        Self {
            seed,
            n,
            block: 0,
            pool: Vec::new(),
        }
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        if self.pool.is_empty() {
            let input = format!("{}:{}:realistic:{}", self.seed, self.n, self.block);
            self.block += 1;
            self.pool = Sha256::digest(input.as_bytes()).to_vec();
        }
        let byte = usize::from(self.pool.pop().unwrap_or(0));
        lo + byte % (hi - lo + 1)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.range(0, from.len() - 1)]
    }
}

const HEADINGS: [&str; 6] = [
    "Étape suivante → la récursion",
    "Why the borrow checker says no",
    "Zusammenfassung: Schleifen und Iteratoren",
    "复习：所有权与借用",
    "A plan for the next café session ☕",
    "Naïve vs. tail-recursive → what changes",
];

const SENTENCES: [&str; 12] = [
    "Let us take this one step at a time, because the idea builds on what you already know.",
    "A function that calls itself needs a base case → otherwise it never stops.",
    "Think of ownership as a single key to a room: you can lend it, but only one holder may change things.",
    "Les accents ne posent aucun problème ici : déjà, voilà, où, naïve.",
    "在中文里，我们说「循序渐进」，意思是一步一步来。",
    "Try it yourself first, then compare with the sketch below.",
    "The compiler is strict, but its messages usually point straight at the fix ← read them slowly.",
    "Größer ist nicht immer besser; klare Namen helfen mehr als lange Kommentare.",
    "When you are unsure, write the smallest example that still shows the problem.",
    "Iterators are lazy: nothing happens until something consumes them ⇒ `collect`, `sum`, `for`.",
    "日本語のテキストも正しく表示されるはずです。",
    "Keep your notes short; a one-line summary per idea beats a page you never reread.",
];

const BULLETS: [&str; 8] = [
    "Write the base case first.",
    "Name the value that shrinks on every call → `n - 1`.",
    "Check the edge cases: 0, 1 and a large input.",
    "Run `cargo test` after each small change.",
    "Résumé : une idée par fonction.",
    "把问题拆小，再逐个解决。",
    "Prefer `&str` over `String` for inputs you only read.",
    "Ask why the test failed before you change the code.",
];

const CODE: [(&str, &[&str]); 4] = [
    (
        "rust",
        &[
            "fn factorial(n: u64) -> u64 {",
            "    match n {",
            "        0 | 1 => 1,",
            "        _ => n * factorial(n - 1),",
            "    }",
            "}",
        ],
    ),
    (
        "python",
        &[
            "def mean(values):",
            "    \"\"\"Average of a non-empty list → float.\"\"\"",
            "    return sum(values) / len(values)",
        ],
    ),
    (
        "rust",
        &[
            "let words: Vec<&str> = text.split_whitespace().collect();",
            "let longest = words.iter().max_by_key(|w| w.len());",
            "println!(\"{longest:?}\"); // 最长的词",
        ],
    ),
    ("sh", &["cargo new étude --lib", "cd étude && cargo test"]),
];

/// The long line: sentences joined until it passes [`LONG_LINE_MIN_CHARS`].
fn long_line(dice: &mut Dice) -> String {
    let mut line = String::from("To put it all in one breath:");
    while line.chars().count() < LONG_LINE_MIN_CHARS {
        line.push(' ');
        line.push_str(dice.pick(&SENTENCES));
    }
    line
}

/// The realistic reply for real user turn `n` under `seed`: the marker line,
/// then Markdown; the persona (when present) is named in the closing line.
pub fn realistic_reply(
    seed: u64,
    n: u64,
    last_user_text: Option<&str>,
    persona: Option<&str>,
) -> String {
    let mut dice = Dice::new(seed, n);
    let mut lines = vec![marker_line(seed, n, last_user_text), String::new()];
    lines.push(format!("## {}", dice.pick(&HEADINGS)));
    lines.push(String::new());
    for _ in 0..dice.range(1, 3) {
        let a = dice.pick(&SENTENCES);
        let b = dice.pick(&SENTENCES);
        lines.push(format!("{a} {b}"));
        lines.push(String::new());
    }
    for _ in 0..dice.range(2, 5) {
        let emphasis = dice.range(0, 2);
        let item = dice.pick(&BULLETS);
        lines.push(match emphasis {
            0 => format!("- **{item}**"),
            1 => format!("- *{item}*"),
            _ => format!("- {item}"),
        });
    }
    lines.push(String::new());
    let (lang, code) = CODE[dice.range(0, CODE.len() - 1)];
    lines.push(format!("```{lang}"));
    lines.extend(code.iter().map(|l| (*l).to_owned()));
    lines.push("```".to_owned());
    lines.push(String::new());
    lines.push(long_line(&mut dice));
    if let Some(word) = persona {
        lines.push(String::new());
        lines.push(format!("(persona: {word})"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_deterministic_and_differ_per_turn_and_seed() {
        let a = realistic_reply(7, 1, Some("hello mentor"), None);
        assert_eq!(a, realistic_reply(7, 1, Some("hello mentor"), None));
        assert_ne!(a, realistic_reply(7, 2, Some("hello mentor"), None));
        assert_ne!(a, realistic_reply(8, 1, Some("hello mentor"), None));
    }

    #[test]
    fn every_reply_has_the_required_shape() {
        for seed in 0..40 {
            for n in 1..8 {
                let r = realistic_reply(seed, n, Some("first words here"), Some("owl"));
                let lines: Vec<&str> = r.lines().collect();
                assert!(
                    (5..=40).contains(&lines.len()),
                    "{} lines:\n{r}",
                    lines.len()
                );
                assert_eq!(
                    lines[0],
                    format!("MENTOR-REPLY {n} {}: first words", nonce(seed, n))
                );
                assert!(lines.iter().any(|l| l.starts_with("## ")), "{r}");
                assert!(lines.iter().any(|l| l.starts_with("- ")), "{r}");
                assert_eq!(lines.iter().filter(|l| l.starts_with("```")).count(), 2);
                assert!(
                    lines
                        .iter()
                        .any(|l| l.chars().count() >= LONG_LINE_MIN_CHARS),
                    "{r}"
                );
                assert!(!r.is_ascii(), "{r}");
                assert!(r.ends_with("(persona: owl)"));
            }
        }
    }

    #[test]
    fn every_reply_carries_accents_arrows_and_cjk_somewhere_in_a_run() {
        let all: String = (1..6)
            .map(|n| realistic_reply(3, n, Some("x"), None))
            .collect();
        assert!(all.contains('→') || all.contains('⇒') || all.contains('←'));
        assert!(all.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)));
        assert!(all.chars().any(|c| "éàèüöäï".contains(c)));
    }

    #[test]
    fn the_marker_stays_short_whatever_the_learner_typed() {
        let long = "x".repeat(500);
        let line = marker_line(1, 3, Some(&format!("{long} {long} {long}")));
        assert!(line.chars().count() <= 40 + 2 * MARKER_WORD_CHARS, "{line}");
        assert_eq!(
            marker_line(1, 0, None),
            format!("MENTOR-REPLY 0 {}: (no user text)", nonce(1, 0))
        );
    }
}
