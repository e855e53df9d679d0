//! The stub mentor's review of a resumed session, as a real mentor opens one:
//! when the request carries the product's resume section (the persona's
//! `## Resuming Previous Session` with the last session's notes), the opening
//! reply names the first item under `Struggling:` and proposes to review it.
//!
//! Honest by construction: the line quotes only what the request carried, so it
//! appears exactly when the harness passed the product's resume context to the
//! model, and the request log records what was found (`LogRecord::recall`).
//! Pure: no I/O.

/// The heading the product's persona puts above the previous session's notes.
pub const RESUME_HEADING: &str = "## Resuming Previous Session";
/// The notes' struggle section title (`studyloop::feeds::summarize`).
const STRUGGLING: &str = "Struggling:";

/// The first struggle item (`name: note`, without the bullet) in the resume
/// section of `text`, if it has one.
pub fn struggle(text: &str) -> Option<String> {
    let section = &text[text.find(RESUME_HEADING)?..];
    let mut lines = section.lines().skip_while(|l| l.trim() != STRUGGLING);
    lines.next()?;
    let item = lines.next()?.trim().strip_prefix("- ")?.trim();
    (!item.is_empty()).then(|| item.chars().take(300).collect())
}

/// The review line's fixed opening (what [`is_review`] looks for).
const REVIEW_OPENING: &str = "Welcome back. Last time you were struggling with ";

/// The review line the first reply after a resume carries.
pub fn review_line(item: &str) -> String {
    format!("{REVIEW_OPENING}{item}; let us review that first.")
}

/// Whether `text` (an earlier reply) already holds a review line.
pub fn is_review(text: &str) -> bool {
    text.contains(REVIEW_OPENING)
}

/// `reply` with the review line after its first (marker) line.
pub fn with_review(reply: &str, item: &str) -> String {
    let (first, rest) = reply.split_once('\n').unwrap_or((reply, ""));
    format!("{first}\n\n{}\n{rest}", review_line(item))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERSONA: &str = "# Study Session Context\n\n## Resuming Previous Session\n\nNotes from the previous session on this topic:\n\nLast session ended x.\n\nWins:\n- borrowing: ok\n\nStruggling:\n- elision: why a returned reference needs a lifetime\n- other: y\n\nParked:\n- q\n";

    #[test]
    fn the_first_struggle_of_the_resume_section_is_found() {
        assert_eq!(
            struggle(PERSONA).as_deref(),
            Some("elision: why a returned reference needs a lifetime")
        );
    }

    #[test]
    fn no_resume_section_or_no_struggle_finds_nothing() {
        assert_eq!(struggle("Struggling:\n- outside any resume section"), None);
        assert_eq!(struggle("## Resuming Previous Session\n\nWins:\n- a"), None);
        assert_eq!(
            struggle("## Resuming Previous Session\nStruggling:\n"),
            None
        );
    }

    #[test]
    fn the_review_follows_the_marker_line() {
        let r = with_review("MENTOR-REPLY 0 abc: x\n\n## Heading", "elision: e");
        assert!(r.starts_with(
            "MENTOR-REPLY 0 abc: x\n\nWelcome back. Last time you were struggling with elision: e;"
        ));
        assert!(r.ends_with("\n\n## Heading"));
    }
}
