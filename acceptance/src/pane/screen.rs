//! Pure helpers over a captured pane screen (plain text, wrapped lines joined):
//! is the harness idle, did the typed prompt echo, what did the mentor say.
//!
//! Nothing here talks to tmux; `PaneDriver` feeds captures in. Kept separate so
//! the rules that decide "the mentor replied" are unit-tested on fixed screens.

use regex::Regex;

/// How many trailing non-blank lines the idle and busy markers are matched
/// against: a harness's input box and footer live at the bottom, and the same
/// words higher up are old history.
pub(crate) const MARKER_WINDOW: usize = 12;

/// Screen chrome a TUI puts in front of a reply line (bullets, box edges).
const LEADING_GLYPHS: &[char] = &[
    '•', '●', '⏺', '│', '┃', '>', '›', '❯', '-', '*', '▣', '◆', '·', '|',
];

/// The last `n` non-blank lines of `screen`, joined with newlines.
pub fn tail(screen: &str, n: usize) -> String {
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whitespace-collapsed text, so wrapping and padding never decide a match.
pub(crate) fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The part of `prompt` used to recognise its echo: its last 32 characters,
/// whitespace-collapsed (a long prompt may scroll or wrap at its start).
pub(crate) fn echo_probe(prompt: &str) -> String {
    let s = squash(prompt);
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(32)..].iter().collect()
}

/// Whether the screen shows the typed prompt.
pub(crate) fn shows_echo(screen: &str, prompt: &str) -> bool {
    let probe = echo_probe(prompt);
    probe.is_empty() || squash(screen).contains(&probe)
}

/// The harness is idle: the idle marker (when the harness has one) is in the
/// bottom lines and the busy marker (when it has one) is not.
pub(crate) fn is_idle(screen: &str, idle: Option<&Regex>, busy: Option<&Regex>) -> bool {
    let bottom = tail(screen, MARKER_WINDOW);
    idle.is_none_or(|r| r.is_match(&bottom)) && busy.is_none_or(|r| !r.is_match(&bottom))
}

/// Lines of `screen` that are new relative to `baseline` and are not the echo
/// of `prompt`: the candidate reply when no stub nonce is available.
pub(crate) fn new_lines(baseline: &str, screen: &str, prompt: &str) -> Vec<String> {
    let probe = echo_probe(prompt);
    let old: std::collections::HashSet<String> = baseline.lines().map(squash).collect();
    screen
        .lines()
        .map(squash)
        .filter(|l| !l.is_empty() && !old.contains(l))
        .filter(|l| probe.is_empty() || !l.contains(&probe))
        .collect()
}

/// What `refusal` finds in the lines of `screen` that are new relative to `baseline`
/// (the prompt's echo left out): the line in which the harness says its login was
/// refused. A TUI that meets a refused key shows it only on its screen; seeing it lets
/// a turn end in seconds, not at its timeout. `None` without a `refusal`.
pub(crate) fn login_refusal(
    refusal: Option<super::Refusal>,
    baseline: &str,
    screen: &str,
    prompt: &str,
) -> Option<String> {
    refusal?(&new_lines(baseline, screen, prompt).join("\n"))
}

/// The mentor's reply as shown: the lines after the first echo of `prompt` at
/// or below line `from` (where the input box sat before typing; a reply that
/// quotes the prompt comes after the echo, so the first match is the echo), up
/// to the idle marker, with leading TUI glyphs stripped. With a stub `marker`
/// (whitespace-collapsed)
/// the block starts at it, else only the marker's line is returned; without
/// a marker and without the echo, there is no reply to extract.
pub fn extract_reply(
    screen: &str,
    from: usize,
    prompt: &str,
    idle: Option<&Regex>,
    marker: Option<&str>,
) -> Option<String> {
    let probe = echo_probe(prompt);
    let lines: Vec<&str> = screen.lines().collect();
    let from = from.min(lines.len());
    let start = lines[from..]
        .iter()
        .position(|l| !probe.is_empty() && squash(l).contains(&probe))
        .map(|i| from + i + 1);
    let mut out = Vec::new();
    // Without the echo there is no telling where the reply starts.
    for line in start.map_or(&[][..], |s| &lines[s..]) {
        if idle.is_some_and(|r| r.is_match(line)) {
            break;
        }
        let cleaned = line.trim().trim_start_matches(LEADING_GLYPHS).trim();
        if !cleaned.is_empty() {
            out.push(cleaned.to_owned());
        }
    }
    if let Some(at) = marker.and_then(|m| out.iter().position(|l| squash(l).contains(m))) {
        // Stub mode: the reply starts at the marker; earlier lines are the
        // harness's own chatter (spinners, "thinking…").
        out.drain(..at);
    }
    let block = out.join("\n");
    match marker {
        Some(m) if !squash(&block).contains(m) => {
            lines.iter().rev().find(|l| squash(l).contains(m)).map(|l| {
                l.trim()
                    .trim_start_matches(LEADING_GLYPHS)
                    .trim()
                    .to_owned()
            })
        }
        _ => (!block.is_empty()).then_some(block),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODEX: &str = "  >_ OpenAI Codex (v0.171.0)\n\
        › first tui turn alpha beta gamma\n\
        • MENTOR-REPLY 1 a1b2c3d4: first tui turn alpha beta gamma\n\
        \x20 Worked for <1s • 02:52\n\
        › Ask Codex to do anything\n\
        \x20 stub-model default · /w · Stub session title\n\n\n";

    #[test]
    fn idle_needs_the_marker_at_the_bottom_and_no_busy_marker() {
        let idle = Regex::new("Ask Codex to do anything").unwrap();
        let busy = Regex::new("esc to interrupt").unwrap();
        assert!(is_idle(CODEX, Some(&idle), Some(&busy)));
        let working = format!("{CODEX}\n• Working (0s • esc to interrupt)\n");
        assert!(!is_idle(&working, Some(&idle), Some(&busy)));
        assert!(!is_idle("nothing here", Some(&idle), None));
        assert!(is_idle("anything", None, None));
    }

    #[test]
    fn old_idle_marker_scrolled_far_up_does_not_count() {
        let idle = Regex::new("READY>").unwrap();
        let lines: Vec<String> = (0..20).map(|i| format!("streaming line {i}")).collect();
        let screen = format!("READY>\n{}\n", lines.join("\n"));
        assert!(!is_idle(&screen, Some(&idle), None));
    }

    #[test]
    fn echo_is_recognised_across_wrapping() {
        let prompt = "what is a closure and how does it capture variables from scope";
        let screen = "› what is a closure and how does it capture\n  variables from scope\n";
        assert!(shows_echo(screen, prompt));
        assert!(!shows_echo("› what is a closure", prompt));
    }

    #[test]
    fn new_lines_exclude_the_echo_and_the_baseline() {
        let base = "banner\n> \n";
        let screen = "banner\n> hello mentor there\nthinking\n";
        assert_eq!(
            new_lines(base, screen, "hello mentor there"),
            vec!["thinking"]
        );
        assert!(new_lines(base, "banner\n> hello mentor there\n", "hello mentor there").is_empty());
    }

    #[test]
    fn reply_is_the_block_after_the_echo_up_to_the_idle_marker() {
        let idle = Regex::new("Ask Codex to do anything").unwrap();
        let reply = extract_reply(
            CODEX,
            0,
            "first tui turn alpha beta gamma",
            Some(&idle),
            None,
        );
        assert_eq!(
            reply.as_deref(),
            Some(
                "MENTOR-REPLY 1 a1b2c3d4: first tui turn alpha beta gamma\nWorked for <1s • 02:52"
            )
        );
    }

    #[test]
    fn with_a_marker_the_reply_falls_back_to_the_marker_line() {
        let reply = extract_reply(CODEX, 0, "not on screen at all", None, Some("a1b2c3d4"));
        assert!(reply.unwrap().starts_with("MENTOR-REPLY 1 a1b2c3d4:"));
        assert_eq!(extract_reply("x\n", 0, "x", None, Some("zzzz")), None);
    }
}
