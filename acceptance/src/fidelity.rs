//! Fidelity: how much of what the stub sent a recorded reply kept.
//!
//! Both texts are normalised only for what a harness legitimately changes
//! when it renders Markdown and lays it out: whitespace (wrapping, margins,
//! indentation), list markers, heading hashes, emphasis and inline-code marks,
//! and code fences. Everything else (a dropped character, a stray border, a
//! status word) counts. The score is the longest common subsequence of the
//! two word sequences: `2·common / (sent + recorded)`, 1.0 when they match.

use serde::{Deserialize, Serialize};

/// Which source a recorded reply came from (recorded per turn in evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// ACP `agent_message_chunk`s (web and ACP surfaces).
    Acp,
    /// The harness's session store (CLI surface).
    SessionStore,
    /// The screen extractor (CLI surface, harnesses without a store).
    Screen,
}

impl SourceKind {
    /// Its evidence name (`acp`, `session-store`, `screen`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acp => "acp",
            Self::SessionStore => "session-store",
            Self::Screen => "screen",
        }
    }

    /// The lowest fidelity ratio a turn from this source may have: 100% for
    /// ACP and session stores (the model's bytes), 95% for a screen extractor
    /// (a TUI may still drop a glyph the rules cannot restore).
    pub fn floor(self) -> f64 {
        match self {
            Self::Acp | Self::SessionStore => 1.0,
            Self::Screen => 0.95,
        }
    }
}

/// The largest word count compared (a longer text is cut; replies are
/// 5–40 lines, a few hundred words).
const MAX_WORDS: usize = 4096;

/// One turn's fidelity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplyScore {
    /// `2·common / (sent + recorded)` over normalised words; 1.0 = identical.
    pub ratio: f64,
    /// Words compared on each side, and words in common.
    pub sent_words: usize,
    /// Words in the recorded reply.
    pub recorded_words: usize,
    /// Words in both, in order.
    pub common_words: usize,
    /// The floor for the reply's source.
    pub floor: f64,
    /// `ratio >= floor`.
    pub pass: bool,
    /// The first words that differ (sent vs recorded), for the evidence.
    pub diff: Option<String>,
}

/// Strips what rendering changes from one line.
fn normalise_line(line: &str) -> String {
    let mut t = line.trim();
    if t.starts_with("```") || t.starts_with("~~~") {
        // A fence line carries only its language tag, which TUIs drop.
        return String::new();
    }
    t = t.trim_start_matches('#').trim_start();
    for marker in ["- ", "* ", "+ ", "• ", "◦ ", "▪ ", "> "] {
        if let Some(rest) = t.strip_prefix(marker) {
            t = rest.trim_start();
            break;
        }
    }
    if let Some((n, rest)) = t.split_once(". ")
        && !n.is_empty()
        && n.len() < 4
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        t = rest;
    }
    t.chars().filter(|c| !matches!(c, '*' | '`')).collect()
}

/// The normalised words of `text`.
pub fn words(text: &str) -> Vec<String> {
    text.lines()
        .map(normalise_line)
        .flat_map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .take(MAX_WORDS)
        .collect()
}

/// Longest common subsequence length (two rows of the table).
fn lcs(a: &[String], b: &[String]) -> usize {
    let mut prev = vec![0_usize; b.len() + 1];
    let mut row = vec![0_usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            row[j + 1] = if x == y {
                prev[j] + 1
            } else {
                row[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))?;
    let window = |w: &[String]| w[at.min(w.len())..(at + 8).min(w.len())].join(" ");
    Some(format!(
        "word {at}: sent {:?} / recorded {:?}",
        window(a),
        window(b)
    ))
}

/// Scores `recorded` against `sent` under the floor of `source`.
pub fn score(sent: &str, recorded: &str, source: SourceKind) -> ReplyScore {
    let a = words(sent);
    let b = words(recorded);
    let common = lcs(&a, &b);
    let total = a.len() + b.len();
    #[expect(
        clippy::cast_precision_loss,
        reason = "word counts are capped at 4096, far below f64's exact range"
    )]
    let ratio = if total == 0 {
        1.0
    } else {
        (2 * common) as f64 / total as f64
    };
    let floor = source.floor();
    ReplyScore {
        ratio,
        sent_words: a.len(),
        recorded_words: b.len(),
        common_words: common,
        floor,
        pass: ratio >= floor,
        diff: first_difference(&a, &b),
    }
}

/// A cell's fidelity over its turns: common words over all turns against all
/// words, so a long turn weighs more than a short one; `None` without turns
/// (unknown, never 0).
pub fn cell_ratio(verdicts: &[ReplyScore]) -> Option<f64> {
    let total: usize = verdicts
        .iter()
        .map(|v| v.sent_words + v.recorded_words)
        .sum();
    let common: usize = verdicts.iter().map(|v| v.common_words).sum();
    #[expect(
        clippy::cast_precision_loss,
        reason = "word counts are far below f64's exact range"
    )]
    match (verdicts.is_empty(), total) {
        (true, _) => None,
        (false, 0) => Some(1.0),
        (false, t) => Some((2 * common) as f64 / t as f64),
    }
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

/// A cell's fidelity: the word-weighted ratio over its scored turns, the
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
