//! Texts the product ships that a check compares what the product did against. They
//! are compiled in from the product's source tree here, and only here, because the
//! comparison must hold the product to its own shipped words: asking the running
//! product for them would let it grade itself.

/// The study-plan architect's planning brief (the persona template for
/// `purpose: planning`): the architect journey checks that the persona the agent
/// received keeps its headings in order.
pub const PLAN_ARCHITECT_BRIEF: &str =
    include_str!("../../../product/studyloop/src/personas/plan-architect.md");
