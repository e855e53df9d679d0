//! The acceptance tier's trial catalogue: what `tests/acceptance.rs` runs.
//!
//! Every trial is built up front, for every harness, whatever the selection:
//! an unselected harness's trials skip by name, so listings are stable. Trial
//! names are `<surface>::<harness>[::<detail>]` (surface as in evidence
//! manifests) or `meta::<check>`. `meta::catalog_is_valid` is the one ungated
//! trial: it validates the catalogue and the shipped turn scripts even when the
//! gate is closed, so a broken definition fails `just test`, not only a live
//! run. Lanes are added here as they land.

use std::collections::BTreeSet;

use studyloop_actors::turn_script::TurnScript;

use crate::probe_trials;
use crate::runner::{TrialReport, TrialSpec};
use crate::selection::{HARNESS_ORDER, HarnessName, RELEASE_HARNESSES, Selection};

// Kept here for callers written before the leaf existed; new code imports
// `crate::turn_scripts` (the catalogue imports every lane, so a lane importing
// the catalogue is an import circle).
pub use crate::turn_scripts::{TURN_SCRIPTS, default_turn_script};

/// Surfaces a trial name may start with (the manifest's words).
pub(crate) const SURFACES: [&str; 6] = [
    "probe",
    "cli-tmux",
    "web-acp",
    "web-acp-browser",
    "drill",
    "mcp",
];

/// The name of the always-on catalogue check.
pub(crate) const CATALOG_TRIAL: &str = "meta::catalog_is_valid";

/// Every acceptance trial.
pub fn acceptance(selection: &Selection) -> Vec<TrialSpec> {
    let mut specs: Vec<TrialSpec> = HARNESS_ORDER
        .into_iter()
        .map(probe_trials::probe_trial)
        .collect();
    specs.extend(HARNESS_ORDER.into_iter().map(crate::lane::cli_tmux::trial));
    // The live proof that a multi-line turn is typed as text (issue 11 §1).
    specs.extend(
        HARNESS_ORDER
            .into_iter()
            .map(crate::lane::paste_trial::trial),
    );
    // A real harness calls the product's MCP tools (issue 14 §6).
    specs.extend(HARNESS_ORDER.into_iter().map(crate::lane::mcp_trial::trial));
    // One interrupt trial per lane kind: the case engine's cleanup path is the
    // same for every harness.
    specs.push(crate::lane::interrupt_trial::trial(
        HarnessName::Codex,
        crate::lane::interrupt_trial::Kind::CliTmux,
    ));
    specs.push(crate::lane::interrupt_trial::trial(
        HarnessName::Codex,
        crate::lane::interrupt_trial::Kind::WebAcp,
    ));
    // `studyloop-uat certify`'s mechanics, hermetically: the preflight and the real-auth probe
    // through pi, the real LiteLLM proxy and a model (issue 16 item 3).
    specs.push(crate::lane::certify_drill::trial());
    // A refused key ends a lane as the named skip, over tmux and over ACP (issue 16 item 4).
    for kind in [
        crate::lane::logged_out::Kind::CliTmux,
        crate::lane::logged_out::Kind::WebAcp,
    ] {
        specs.push(crate::lane::logged_out::trial(
            HarnessName::Codex,
            kind,
            selection,
        ));
    }
    // The study arc over CLI/tmux, one harness (the browser arc is a UAT journey).
    specs.push(crate::lane::arc_tmux::trial(selection));
    // web-acp:: and web-acp-browser:: for every harness with an ACP path (grok has none).
    specs.extend(
        HARNESS_ORDER
            .into_iter()
            .flat_map(crate::lane::web_acp::trials),
    );
    // drill:: (tmux) per harness and drill::<h>::acp per ACP-capable one:
    // a drill's check result reaches the live mentor (issue 19 item 7).
    specs.extend(
        HARNESS_ORDER
            .into_iter()
            .flat_map(crate::lane::drill::trials),
    );
    let names: Vec<String> = specs.iter().map(|s| s.name().to_owned()).collect();
    specs.push(TrialSpec::ungated(CATALOG_TRIAL, move |_| {
        let problems = validate(&names);
        if problems.is_empty() {
            TrialReport::passed()
        } else {
            TrialReport::failed(problems.join("\n"))
        }
    }));
    specs
}

/// Every problem with a catalogue of trial names and the shipped turn scripts.
pub fn validate(names: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for name in names {
        if !seen.insert(name.as_str()) {
            problems.push(format!("duplicate trial name {name}"));
        }
        if let Some(why) = name_problem(name) {
            problems.push(format!("bad trial name {name}: {why}"));
        }
    }
    for harness in HARNESS_ORDER {
        let probe = probe_trials::trial_name(harness);
        if !seen.contains(probe.as_str()) {
            problems.push(format!(
                "no availability probe for {harness} (expected {probe})"
            ));
        }
    }
    let mut order = HARNESS_ORDER.to_vec();
    let mut release = RELEASE_HARNESSES.to_vec();
    order.sort();
    release.sort();
    if order != release {
        problems.push("HARNESS_ORDER is not a re-ordering of RELEASE_HARNESSES".to_owned());
    }
    for (file, text) in TURN_SCRIPTS {
        if let Err(err) = TurnScript::from_json_str(text) {
            problems.push(format!("turn-scripts/{file}: {err}"));
        }
    }
    problems
}

fn name_problem(name: &str) -> Option<&'static str> {
    let parts: Vec<&str> = name.split("::").collect();
    let well_formed = |p: &&str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    };
    if parts.len() < 2 || !parts.iter().all(well_formed) {
        return Some("expected lowercase `<surface>::<harness>[::<detail>]` or `meta::<check>`");
    }
    if parts[0] == "meta" {
        return None;
    }
    if !SURFACES.contains(&parts[0]) {
        return Some(
            "unknown surface (known: probe, cli-tmux, web-acp, web-acp-browser, drill, mcp, meta)",
        );
    }
    if parts[1].parse::<HarnessName>().is_err() {
        return Some("unknown harness (known: codex, claude, kiro, pi, opencode, grok)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_catalogue_is_valid() {
        let specs = acceptance(&Selection::defaults());
        let names: Vec<String> = specs.iter().map(|s| s.name().to_owned()).collect();
        assert_eq!(validate(&names), Vec::<String>::new());
        // probe::, cli-tmux::, cli-tmux::<h>::paste and mcp:: per harness, web-acp::
        // and web-acp-browser:: per ACP-capable harness (all but grok), the
        // two interrupt trials (cli-tmux and web-acp), the two logged-out
        // trials (cli-tmux and web-acp), the CLI study arc and the meta check;
        // drill::<h> per harness and drill::<h>::acp per ACP-capable one; the
        // certify drill (probe::pi::certify).
        assert_eq!(
            names.len(),
            HARNESS_ORDER.len() * 5 + (HARNESS_ORDER.len() - 1) * 3 + 7
        );
        assert!(names.iter().any(|n| n == "probe::pi::certify"));
        assert!(names.iter().any(|n| n == "cli-tmux::codex::logged-out"));
        assert!(names.iter().any(|n| n == "web-acp::codex::logged-out"));
        assert!(names.iter().any(|n| n == "cli-tmux::codex::study-arc"));
        assert!(names.iter().any(|n| n == "drill::codex::acp"));
        assert!(names.iter().any(|n| n == "web-acp::codex::interrupt"));
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with("web-acp") && n.ends_with("::grok"))
        );
        assert_eq!(default_turn_script().unwrap().turns.len(), 3);
    }

    #[test]
    fn validation_names_every_problem() {
        let names: Vec<String> = [
            "probe::codex",
            "probe::codex",
            "Probe::x",
            "laneless",
            "web-acp::oclode",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let problems = validate(&names).join("\n");
        assert!(
            problems.contains("duplicate trial name probe::codex"),
            "{problems}"
        );
        assert!(problems.contains("bad trial name Probe::x"), "{problems}");
        assert!(problems.contains("bad trial name laneless"), "{problems}");
        assert!(
            problems.contains("web-acp::oclode: unknown harness"),
            "{problems}"
        );
        assert!(
            problems.contains("no availability probe for kiro"),
            "{problems}"
        );
    }
}
