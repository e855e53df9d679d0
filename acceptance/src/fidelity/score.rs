//! The scorer itself: normalisation, alignment ratio and the per-cell roll-up
//! (the measures are described on [`crate::fidelity`]).

use serde::{Deserialize, Serialize};

use super::align::{MAX_ALIGN_CHARS, align, first_difference};
use super::source::SourceKind;

/// The most non-alphanumeric characters a screen reply may leave unmatched.
pub const MAX_GLYPH_EDITS: usize = 3;

/// How many kept chrome lines a score lists.
const MAX_CHROME_LINES: usize = 5;

/// One turn's fidelity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplyScore {
    /// `exact` (ACP, session store) or `chars` (screen).
    pub(crate) measure: &'static str,
    /// `2·common / (sent + recorded)` over normalised characters; 1.0 = identical;
    /// `None` when there is nothing to compare (an empty side): unknown, and a fail.
    pub ratio: Option<f64>,
    /// Normalised characters sent.
    pub(crate) sent_chars: usize,
    /// Normalised characters recorded.
    pub(crate) recorded_chars: usize,
    /// Characters in both, in order.
    pub(crate) common_chars: usize,
    /// Letters and digits unmatched on either side (screen: any fails).
    pub(crate) content_edits: usize,
    /// Other characters unmatched on either side.
    pub(crate) glyph_edits: usize,
    /// The floor for the reply's source.
    pub floor: f64,
    /// Whether the reply is faithful under its source's measure.
    pub pass: bool,
    /// The first difference (sent vs recorded), for the evidence.
    pub diff: Option<String>,
    /// Recorded lines found nowhere in what was sent (at most five).
    pub(crate) kept_chrome: Vec<String>,
}

/// ACP and session-store text as compared: `\r\n` and `\r` become `\n`, trailing
/// spaces and tabs are cut from every line, trailing blank lines are dropped.
pub fn normalise_exact(text: &str) -> String {
    let unix = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = unix
        .split('\n')
        .map(|l| l.trim_end_matches([' ', '\t']))
        .collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}

/// Whether `rest` (what follows a fence marker) is only a language tag.
fn language_tag(rest: &str) -> bool {
    rest.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_' | '.'))
}

/// One line with what a TUI's rendering changes undone: margins, a heading's
/// hashes, a list bullet, emphasis and inline-code marks; a bare fence line (or one
/// with only its language tag) is dropped, but text behind a fence marker is kept.
fn screen_line(line: &str) -> String {
    let mut t = line.trim();
    for fence in ["```", "~~~"] {
        if let Some(rest) = t.strip_prefix(fence) {
            let rest = rest.trim_start_matches(fence.chars().next().unwrap_or('`'));
            if language_tag(rest.trim()) {
                return String::new();
            }
            t = rest.trim();
        }
    }
    t = t.trim_start_matches('#').trim_start();
    for marker in ["- ", "* ", "+ ", "• ", "◦ ", "▪ ", "> "] {
        if let Some(rest) = t.strip_prefix(marker) {
            t = rest.trim_start();
            break;
        }
    }
    let kept: String = t.chars().filter(|c| !matches!(c, '*' | '`')).collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Screen text as compared: [`screen_line`] on every line, blank lines dropped,
/// lines joined by one space (a TUI rewraps, so line breaks carry no meaning).
pub fn normalise_screen(text: &str) -> String {
    normalised_lines(text, SourceKind::Screen).join(" ")
}

/// The normalised non-blank lines of `text` under `source`'s rules.
fn normalised_lines(text: &str, source: SourceKind) -> Vec<String> {
    match source {
        SourceKind::Screen => text
            .lines()
            .map(screen_line)
            .filter(|l| !l.is_empty())
            .collect(),
        SourceKind::Acp | SourceKind::SessionStore => normalise_exact(text)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect(),
    }
}

/// Recorded lines that occur nowhere in what was sent (the chrome a reader kept).
fn kept_chrome(sent: &str, recorded: &str, source: SourceKind) -> Vec<String> {
    let sent = normalised_lines(sent, source).join("\n");
    let sent_flat = normalise_screen(&sent);
    normalised_lines(recorded, source)
        .into_iter()
        .filter(|l| !sent.contains(l.as_str()) && !sent_flat.contains(l.as_str()))
        .take(MAX_CHROME_LINES)
        .collect()
}

/// Scores `recorded` against `sent` under the measure and floor of `source`.
pub fn score(sent: &str, recorded: &str, source: SourceKind) -> ReplyScore {
    let (a, b, measure) = match source {
        SourceKind::Screen => (normalise_screen(sent), normalise_screen(recorded), "chars"),
        SourceKind::Acp | SourceKind::SessionStore => {
            (normalise_exact(sent), normalise_exact(recorded), "exact")
        }
    };
    let (ac, bc): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let floor = source.floor();
    let mut s = ReplyScore {
        measure,
        ratio: None,
        sent_chars: ac.len(),
        recorded_chars: bc.len(),
        common_chars: 0,
        content_edits: 0,
        glyph_edits: 0,
        floor,
        pass: false,
        diff: first_difference(&ac, &bc, source),
        kept_chrome: kept_chrome(sent, recorded, source),
    };
    if ac.is_empty() || bc.is_empty() {
        s.diff = Some(
            if bc.is_empty() {
                "the recorded reply is empty: nothing was measured (unknown, a fail)"
            } else {
                "nothing was sent to compare with: nothing was measured (unknown, a fail)"
            }
            .to_owned(),
        );
        return s;
    }
    let Some(al) = align(&ac, &bc) else {
        s.diff = Some(format!(
            "{}; the differing middle is longer than {MAX_ALIGN_CHARS} characters, so it was not aligned (a fail)",
            s.diff.unwrap_or_default()
        ));
        return s;
    };
    #[expect(
        clippy::cast_precision_loss,
        reason = "character counts are far below f64's exact range"
    )]
    let ratio = (2 * al.common) as f64 / (ac.len() + bc.len()) as f64;
    s.ratio = Some(ratio);
    s.common_chars = al.common;
    s.content_edits = al.content_edits;
    s.glyph_edits = al.glyph_edits;
    s.pass = match source {
        SourceKind::Screen => {
            ratio >= floor && al.content_edits == 0 && al.glyph_edits <= MAX_GLYPH_EDITS
        }
        SourceKind::Acp | SourceKind::SessionStore => ac == bc,
    };
    s
}

/// A cell's fidelity over its measured turns: common characters over all their
/// characters, so a long turn weighs more than a short one; `None` without a
/// measured turn (unknown, never 0 or 1).
pub fn cell_ratio(verdicts: &[ReplyScore]) -> Option<f64> {
    let measured: Vec<&ReplyScore> = verdicts.iter().filter(|v| v.ratio.is_some()).collect();
    let total: usize = measured
        .iter()
        .map(|v| v.sent_chars + v.recorded_chars)
        .sum();
    let common: usize = measured.iter().map(|v| v.common_chars).sum();
    #[expect(
        clippy::cast_precision_loss,
        reason = "character counts are far below f64's exact range"
    )]
    (total > 0).then(|| (2 * common) as f64 / total as f64)
}

/// One turn's recorded reply and its fidelity (a lane's per-turn evidence).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnFidelity {
    /// The stub's turn number.
    pub turn: u64,
    /// Where the recorded reply came from.
    pub source: SourceKind,
    /// The recorded reply (what the transcript holds).
    pub text: String,
    /// Its score against what the stub sent; `None` when the stub's log has
    /// no answer for the turn (real-auth, or a lost log): unknown, not 0.
    pub verdict: Option<ReplyScore>,
}

/// A cell's fidelity: the character-weighted ratio over its scored turns, the
/// strictest floor among its sources, and whether every scored turn and the
/// ratio meet it (`results.jsonl`, receipts and the COVERAGE column).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellFidelity {
    /// `cell_ratio` of the scored turns; `None` without any.
    pub ratio: Option<f64>,
    /// The highest floor among the turns' sources.
    pub floor: f64,
    /// Every scored turn passed and the ratio meets the floor (`false`
    /// without a scored turn: nothing was proven).
    pub pass: bool,
    /// Turns scored / recorded.
    pub scored_turns: usize,
    /// Turns recorded.
    pub turns: usize,
    /// The sources the turns were read from, each once, in order of first
    /// use (the COVERAGE column names them).
    #[serde(default)]
    pub sources: Vec<SourceKind>,
}

impl CellFidelity {
    /// Sums up a cell's turns.
    pub fn of(turns: &[TurnFidelity]) -> Self {
        let verdicts: Vec<ReplyScore> = turns.iter().filter_map(|t| t.verdict.clone()).collect();
        let ratio = cell_ratio(&verdicts);
        let floor = turns
            .iter()
            .map(|t| t.source.floor())
            .fold(0.0_f64, f64::max);
        let mut sources = Vec::new();
        for t in turns {
            if !sources.contains(&t.source) {
                sources.push(t.source);
            }
        }
        Self {
            sources,
            pass: ratio.is_some_and(|r| r >= floor) && verdicts.iter().all(|v| v.pass),
            ratio,
            floor,
            scored_turns: verdicts.len(),
            turns: turns.len(),
        }
    }
}
