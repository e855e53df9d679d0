//! Fidelity: whether a recorded reply is what the stub sent.
//!
//! Two measures, by source (issue 33 §3):
//! - **ACP and session stores** carry the model's own bytes, so the text itself is
//!   compared after one documented normalisation, [`normalise_exact`]: line endings
//!   become `\n`, trailing spaces and tabs end no line, and trailing blank lines are
//!   dropped. Anything less than equality fails, and the first difference is shown
//!   (line, column and both texts around it).
//! - **The screen** is a rendering: a TUI drops emphasis and inline-code marks,
//!   heading hashes and fence lines, redraws list bullets and rewraps lines. Those
//!   (and only those, [`normalise_screen`]) are undone on both sides, then the two
//!   character sequences are aligned in order (longest common subsequence over every
//!   character, punctuation included). It passes when the ratio
//!   `2·common / (sent + recorded)` meets [`SourceKind::floor`] *and* not one letter or
//!   digit is unmatched on either side, with at most [`MAX_GLYPH_EDITS`] other
//!   characters unmatched (a glyph the extractor could not restore): one wrong content
//!   word cannot pass, however long the reply.
//!
//! Either way, an empty recorded reply (or nothing sent) is no measurement: its ratio
//! is `None` (unknown) and it fails, never 1.0. Recorded lines that occur nowhere in
//! what was sent are reported as the chrome the reader kept.

mod align;
#[cfg(test)]
mod align_tests;
mod score;
#[cfg(test)]
mod score_tests;
mod source;

pub use score::{
    CellFidelity, MAX_GLYPH_EDITS, ReplyScore, TurnFidelity, cell_ratio, normalise_exact,
    normalise_screen, score,
};
pub use source::SourceKind;
