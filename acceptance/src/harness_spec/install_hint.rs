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

/// How to sign `harness` in, for the "not logged in" skip of an authenticated probe.
pub fn login_hint(harness: HarnessName) -> &'static str {
    match harness {
        HarnessName::Codex => "run `codex login` (or set OPENAI_API_KEY)",
        HarnessName::Claude => "run `claude` and `/login` (or set ANTHROPIC_API_KEY)",
        HarnessName::Kiro => "run `kiro-cli login`",
        HarnessName::Pi => {
            "run `pi` and `/login`, or set your provider's key (e.g. ANTHROPIC_API_KEY)"
        }
        HarnessName::Opencode => "run `opencode auth login`",
        HarnessName::Grok => "set GROK_API_KEY",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_has_a_login_hint_naming_a_command_or_a_key() {
        for h in crate::selection::HARNESS_ORDER {
            let hint = login_hint(h);
            assert!(
                hint.contains('`') || hint.contains("_API_KEY"),
                "{h}: {hint}"
            );
        }
    }

    #[test]
    fn the_hint_names_the_recipe_or_the_manual_install() {
        assert!(install_hint(HarnessName::Codex).contains("just harnesses"));
        assert!(install_hint(HarnessName::Kiro).contains("not on npm"));
    }
}
