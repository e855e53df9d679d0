//! The alignment against a plain reference (issue 33 item 5: the fidelity scorer's
//! pass/fail cases left its counts unchecked, so a wrong table index or a miscounted
//! edit survived mutation). The reference is the textbook longest-common-subsequence
//! table over the whole texts, with no prefix or suffix trimmed and no walk back.

use super::align::{MAX_ALIGN_CHARS, align};

fn lcs(a: &[char], b: &[char]) -> usize {
    let mut prev = vec![0_usize; b.len() + 1];
    for x in a {
        let mut row = vec![0_usize; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            row[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(row[j])
            };
        }
        prev = row;
    }
    prev[b.len()]
}

/// A small deterministic generator (xorshift), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
    fn text(&mut self, alphabet: &[char], max: usize) -> Vec<char> {
        let n = self.below(max + 1);
        (0..n)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}

/// Random pairs around a shared prefix and suffix (so the trimming is exercised), in
/// three alphabets: letters only, glyphs only, and both.
fn pairs(alphabet: &[char], n: usize) -> Vec<(Vec<char>, Vec<char>)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ alphabet.len() as u64);
    (0..n)
        .map(|_| {
            let (pre, suf) = (rng.text(alphabet, 6), rng.text(alphabet, 6));
            let (x, y) = (rng.text(alphabet, 14), rng.text(alphabet, 14));
            let join = |m: &[char]| [pre.as_slice(), m, suf.as_slice()].concat();
            (join(&x), join(&y))
        })
        .collect()
}

#[test]
fn every_count_agrees_with_a_plain_lcs() {
    for (name, alphabet) in [
        ("letters", &['a', 'b', 'c', '1'][..]),
        ("glyphs", &['-', '*', ' ', '\n'][..]),
        ("mixed", &['a', 'b', '1', '-', ' ', '*'][..]),
    ] {
        for (i, (a, b)) in pairs(alphabet, 3000).into_iter().enumerate() {
            let got = align(&a, &b).expect("short texts are aligned");
            let want = lcs(&a, &b);
            let at = || {
                format!(
                    "{name} case {i}: {:?} / {:?}",
                    a.iter().collect::<String>(),
                    b.iter().collect::<String>()
                )
            };
            assert_eq!(got.common, want, "common: {}", at());
            let edits = a.len() + b.len() - 2 * want;
            assert_eq!(
                got.content_edits + got.glyph_edits,
                edits,
                "edits: {}",
                at()
            );
            // With one kind of character the split is forced.
            match name {
                "letters" => assert_eq!(got.content_edits, edits, "content: {}", at()),
                "glyphs" => assert_eq!(got.glyph_edits, edits, "glyphs: {}", at()),
                _ => {}
            }
        }
    }
}

#[test]
fn the_walk_counts_each_unmatched_character_by_kind() {
    let chars = |s: &str| s.chars().collect::<Vec<_>>();
    // (sent, recorded, common, content, glyph)
    for (a, b, common, content, glyph) in [
        ("abc", "axc", 2, 2, 0),
        ("a-b", "a b", 2, 0, 2),
        ("a1-", "a2*", 1, 2, 2),
        ("", "", 0, 0, 0),
        ("same", "same", 4, 0, 0),
        ("ab", "", 0, 2, 0),
        ("", "--", 0, 0, 2),
        ("x*yz", "xyz", 3, 0, 1),
        ("xyz", "x9yz", 3, 1, 0),
    ] {
        let got = align(&chars(a), &chars(b)).unwrap();
        assert_eq!(
            (got.common, got.content_edits, got.glyph_edits),
            (common, content, glyph),
            "{a:?} / {b:?}"
        );
    }
}

#[test]
fn a_middle_longer_than_the_bound_is_not_aligned_on_either_side() {
    let x = |n: usize| vec!['x'; n];
    let y = |n: usize| vec!['y'; n];
    // The differing middle exactly at the bound is aligned; one more is not.
    for (a, b, aligned) in [
        (x(MAX_ALIGN_CHARS), y(MAX_ALIGN_CHARS), true),
        (x(MAX_ALIGN_CHARS + 1), y(1), false),
        (x(1), y(MAX_ALIGN_CHARS + 1), false),
        (x(MAX_ALIGN_CHARS + 1), y(MAX_ALIGN_CHARS + 1), false),
    ] {
        assert_eq!(
            align(&a, &b).is_some(),
            aligned,
            "{} / {} chars",
            a.len(),
            b.len()
        );
    }
    let got = align(&x(MAX_ALIGN_CHARS), &y(MAX_ALIGN_CHARS)).unwrap();
    assert_eq!((got.common, got.content_edits), (0, 2 * MAX_ALIGN_CHARS));
    // A middle empty on one side needs no table, whatever the other side's length:
    // every character there is an edit.
    let long = [x(3), y(2 * MAX_ALIGN_CHARS)].concat();
    let got = align(&x(3), &long).expect("an empty middle is always aligned");
    assert_eq!(
        (got.common, got.content_edits, got.glyph_edits),
        (3, 2 * MAX_ALIGN_CHARS, 0)
    );
}

#[test]
fn the_first_difference_is_named_where_a_person_reads_it() {
    use super::align::first_difference;
    use super::source::SourceKind;
    let chars = |s: &str| s.chars().collect::<Vec<_>>();
    let (a, b) = (chars("abc\ndefXgh\n"), chars("abc\ndefYgh\n"));
    assert_eq!(
        first_difference(&a, &b, SourceKind::Acp).as_deref(),
        Some(r#"line 2 column 4: sent "abc\ndefXgh\n" / recorded "abc\ndefYgh\n""#)
    );
    assert_eq!(
        first_difference(&a, &b, SourceKind::Screen).as_deref(),
        Some(r#"char 7: sent "abc\ndefXgh\n" / recorded "abc\ndefYgh\n""#)
    );
    // From 20 characters before the difference to 40 after it, on each side.
    let sent: String = (0..100)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut recorded = sent.clone();
    recorded.replace_range(50..51, "#");
    let d = first_difference(&chars(&sent), &chars(&recorded), SourceKind::Screen).unwrap();
    assert_eq!(
        d,
        format!(
            "char 50: sent {:?} / recorded {:?}",
            &sent[30..90],
            &recorded[30..90]
        )
    );
    // One text a prefix of the other: the difference is where the shorter ends.
    assert_eq!(
        first_difference(&chars("same"), &chars("same+"), SourceKind::Acp).as_deref(),
        Some(r#"line 1 column 5: sent "same" / recorded "same+""#)
    );
    assert_eq!(
        first_difference(&chars("same"), &chars("same"), SourceKind::Acp),
        None
    );
}
