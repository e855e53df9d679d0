//! Council grading: the pinned roster of judge seats, the prompt each seat receives, the
//! check of each reply, arbitration (reject_if first, then medians, spreads and flagged
//! disagreements) and the `ARBITRATION.md` written beside the private bundle.

mod approval;
mod arbitrate;
mod figures;
mod grade;
mod prompt;
mod recheck;
mod replay;
mod reply;
mod report;
mod roster;

pub use approval::{SeatApprovals, seat_capability};
pub use arbitrate::{
    ARBITRATION_SCHEMA, Arbitration, CriterionResult, Pin, RejectionRecord, SeatResult, SeatStatus,
    arbitrate,
};
pub use figures::line as figures_line;
pub use grade::{
    ARBITRATION_JSON, ARBITRATION_MD, CellContext, CouncilError, Graded, Grader, write,
};
pub use prompt::{
    DEFAULT_LIMITS, MAX_FILE_CHARS, MAX_TOTAL_CHARS, SeatPrompt, build as build_prompt,
    build_within as build_prompt_within,
};
pub use recheck::{MAX_ARBITRATION_BYTES, Rechecked, ReplyReadError, read_replies, recheck};
pub use reply::{
    CriterionScore, ReplyError, json_schema as reply_json_schema, parse as parse_reply,
};
pub use report::render;
pub use roster::{
    Backend, Council, DEFAULT_COUNCIL_FILE, DEFAULT_COUNCIL_REGISTRY, EvidenceLimits, JudgeBudget,
    Roster, Seat, SeatAbsent, StructuredOutput, StubTarget, StubWire, UnknownCouncil,
};
