//! How to get each harness binary: the fix every "not on PATH" skip names
//! (the probe, the lanes and the UAT journeys gate on the same binaries).

use crate::selection::HarnessName;

/// How to get each harness binary, for the skip reason.
pub fn install_hint(harness: HarnessName) -> &'static str {
    match harness {
        HarnessName::Kiro => {
            "install the Kiro CLI yourself and sign in; it is not on npm, so `just harnesses` cannot pin it"
        }
        _ => {
            "run `just harnesses` to install the pinned CLIs into .harnesses/, which `just testacc` puts first on PATH"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_names_the_recipe_or_the_manual_install() {
        assert!(install_hint(HarnessName::Codex).contains("just harnesses"));
        assert!(install_hint(HarnessName::Kiro).contains("not on npm"));
    }
}
