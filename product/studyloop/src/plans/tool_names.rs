//! The plan tools' names as `studyloop-mcp` lists them (reference §7 order): a
//! leaf the MCP crate and `studyloop install agents` share.

/// The nine plan tools of `studyloop-mcp`, in the reference order (§7);
/// `studyloop install agents` prints them.
pub const PLAN_TOOL_NAMES: [&str; 9] = [
    "list_study_plans",
    "get_study_plan",
    "get_planning_interview",
    "create_study_plan",
    "update_study_plan",
    "set_study_plan_status",
    "set_study_plan_milestone",
    "evaluate_study_plan",
    "delete_study_plan",
];
