//! Evidence globs: how a criterion names the bundle files a seat must cite.
//!
//! Deliberately tiny: `*` matches within one path segment, `**` matches any number of
//! whole segments (including none), `?` one character; everything else is literal. Paths
//! are the bundle inventory's relative, `/`-separated names.

/// Whether `path` (a bundle-relative path) matches `pattern`.
#[must_use]
pub fn matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').collect();
    let segs: Vec<&str> = path.split('/').collect();
    match_segments(&pat, &segs)
}

fn match_segments(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => (0..=segs.len()).any(|skip| match_segments(rest, &segs[skip..])),
        Some((first, rest)) => segs.split_first().is_some_and(|(seg, tail)| {
            match_segment(first.as_bytes(), seg.as_bytes()) && match_segments(rest, tail)
        }),
    }
}

fn match_segment(pat: &[u8], text: &[u8]) -> bool {
    match pat.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| match_segment(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && match_segment(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && match_segment(rest, &text[1..]),
    }
}

/// Whether `pattern` is an acceptable evidence entry: relative, no `..`, no empty
/// segment, no backslash.
#[must_use]
pub(crate) fn is_valid(pattern: &str) -> bool {
    !pattern.is_empty()
        && !pattern.starts_with('/')
        && !pattern.contains('\\')
        && pattern
            .split('/')
            .all(|seg| !seg.is_empty() && seg != ".." && seg != ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_star_and_double_star() {
        assert!(matches("transcript.jsonl", "transcript.jsonl"));
        assert!(!matches("transcript.jsonl", "x/transcript.jsonl"));
        assert!(matches("lifecycle/*.json", "lifecycle/start.json"));
        assert!(!matches("lifecycle/*.json", "lifecycle/a/start.json"));
        assert!(matches("db/**", "db/topics.json"));
        assert!(matches("db/**", "db/a/b.json"));
        assert!(!matches("db/**", "dbx/a.json"));
        assert!(matches("**/x.txt", "x.txt"));
        assert!(matches("**/x.txt", "a/b/x.txt"));
        assert!(matches("turn-?.json", "turn-1.json"));
        assert!(!matches("turn-?.json", "turn-10.json"));
    }

    #[test]
    fn validity() {
        for ok in ["a", "a/*.json", "db/**"] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in ["", "/etc", "../x", "a//b", "a\\b", "./a"] {
            assert!(!is_valid(bad), "{bad}");
        }
    }
}
