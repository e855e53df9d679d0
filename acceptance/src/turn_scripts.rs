//! The turn scripts shipped in `acceptance/turn-scripts/`: a leaf, so lanes
//! and journeys load the default script without importing the trial catalogue
//! (which imports every lane).

use studyloop_actors::turn_script::{TurnScript, TurnScriptError};

/// The turn scripts shipped in `acceptance/turn-scripts/`, by file name.
pub const TURN_SCRIPTS: &[(&str, &str)] = &[
    (
        "study-v1.json",
        include_str!("../turn-scripts/study-v1.json"),
    ),
    (
        "study-arc-v1.json",
        include_str!("../turn-scripts/study-arc-v1.json"),
    ),
];

/// The default turn script's file name.
pub(crate) const DEFAULT_TURN_SCRIPT: &str = "study-v1.json";
/// The study arc's script: seven turns with a struggle, a win and a tangent to park.
pub const ARC_TURN_SCRIPT: &str = "study-arc-v1.json";

/// The default turn script (`study-v1.json`), loaded strictly.
pub fn default_turn_script() -> Result<TurnScript, TurnScriptError> {
    TurnScript::from_json_str(TURN_SCRIPTS[0].1)
}

/// The shipped turn script `file`, loaded strictly.
///
/// # Errors
/// The script's own error, or a message naming an unknown file and the shipped set.
pub(crate) fn named_turn_script(file: &str) -> Result<TurnScript, String> {
    let (_, text) = TURN_SCRIPTS
        .iter()
        .find(|(name, _)| *name == file)
        .ok_or_else(|| {
            let shipped: Vec<&str> = TURN_SCRIPTS.iter().map(|(n, _)| *n).collect();
            format!(
                "no shipped turn script named `{file}`; shipped: {}",
                shipped.join(", ")
            )
        })?;
    TurnScript::from_json_str(text).map_err(|e| format!("turn-scripts/{file}: {e}"))
}
