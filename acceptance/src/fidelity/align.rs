//! The character alignment behind the screen measure (and the ratio reported for
//! exact sources): the longest common subsequence after the common prefix and
//! suffix, walked back so every unmatched character is counted as content (a letter
//! or digit) or a glyph, and the first difference as a person reads it.

use super::source::SourceKind;

/// The longest differing middle (after the common prefix and suffix) aligned
/// character by character; a longer one is not aligned and fails, named.
pub(crate) const MAX_ALIGN_CHARS: usize = 4096;
/// Characters matched and those left over on each side.
pub(super) struct Alignment {
    pub(super) common: usize,
    pub(super) content_edits: usize,
    pub(super) glyph_edits: usize,
}

fn tally(unmatched: &[char], a: &mut Alignment) {
    for c in unmatched {
        if c.is_alphanumeric() {
            a.content_edits += 1;
        } else {
            a.glyph_edits += 1;
        }
    }
}

/// The longest common subsequence of `a` and `b` (after their common prefix and
/// suffix), with every unmatched character counted; `None` when the differing
/// middle is longer than [`MAX_ALIGN_CHARS`].
pub(super) fn align(a: &[char], b: &[char]) -> Option<Alignment> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    let suffix = a_rest
        .iter()
        .rev()
        .zip(b_rest.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let am = &a_rest[..a_rest.len() - suffix];
    let bm = &b_rest[..b_rest.len() - suffix];
    let mut out = Alignment {
        common: prefix + suffix,
        content_edits: 0,
        glyph_edits: 0,
    };
    if am.is_empty() || bm.is_empty() {
        tally(am, &mut out);
        tally(bm, &mut out);
        return Some(out);
    }
    if am.len() > MAX_ALIGN_CHARS || bm.len() > MAX_ALIGN_CHARS {
        return None;
    }
    // The full table (u16: a middle is at most MAX_ALIGN_CHARS long), walked back
    // to name every unmatched character.
    let w = bm.len() + 1;
    let mut t = vec![0_u16; (am.len() + 1) * w];
    for i in 1..=am.len() {
        for j in 1..=bm.len() {
            t[i * w + j] = if am[i - 1] == bm[j - 1] {
                t[(i - 1) * w + j - 1] + 1
            } else {
                t[(i - 1) * w + j].max(t[i * w + j - 1])
            };
        }
    }
    let (mut i, mut j) = (am.len(), bm.len());
    let (mut left, mut right) = (Vec::new(), Vec::new());
    while i > 0 && j > 0 {
        if am[i - 1] == bm[j - 1] {
            out.common += 1;
            i -= 1;
            j -= 1;
        } else if t[(i - 1) * w + j] >= t[i * w + j - 1] {
            left.push(am[i - 1]);
            i -= 1;
        } else {
            right.push(bm[j - 1]);
            j -= 1;
        }
    }
    left.extend(&am[..i]);
    right.extend(&bm[..j]);
    tally(&left, &mut out);
    tally(&right, &mut out);
    Some(out)
}

/// Where the texts first differ: line and column (exact) or character (screen),
/// with each side from 20 characters before it to 40 after.
pub(super) fn first_difference(a: &[char], b: &[char], source: SourceKind) -> Option<String> {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))?;
    // From 20 characters before the difference, so the word it falls in shows.
    let from = at.saturating_sub(20);
    let window = |w: &[char]| {
        w[from.min(w.len())..(at + 40).min(w.len())]
            .iter()
            .collect::<String>()
    };
    let place = match source {
        SourceKind::Screen => format!("char {at}"),
        SourceKind::Acp | SourceKind::SessionStore => {
            let before = &a[..at.min(a.len())];
            let line = before.iter().filter(|c| **c == '\n').count() + 1;
            let col = before.iter().rev().take_while(|c| **c != '\n').count() + 1;
            format!("line {line} column {col}")
        }
    };
    Some(format!(
        "{place}: sent {:?} / recorded {:?}",
        window(a),
        window(b)
    ))
}
