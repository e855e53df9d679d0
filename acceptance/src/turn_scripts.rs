//! The turn scripts shipped in `acceptance/turn-scripts/`: a leaf, so lanes
//! and journeys load the default script without importing the trial catalogue
//! (which imports every lane).

use studyloop_actors::turn_script::{TurnScript, TurnScriptError};

/// The turn scripts shipped in `acceptance/turn-scripts/`, by file name.
pub const TURN_SCRIPTS: &[(&str, &str)] = &[(
    "study-v1.json",
    include_str!("../turn-scripts/study-v1.json"),
)];

/// The default turn script (`study-v1.json`), loaded strictly.
pub fn default_turn_script() -> Result<TurnScript, TurnScriptError> {
    TurnScript::from_json_str(TURN_SCRIPTS[0].1)
}
