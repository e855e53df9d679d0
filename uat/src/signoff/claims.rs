//! Claims cross-checked against independent evidence (issue 33 §1).
//!
//! A field a bundle, a results line or an arbitration writes about itself is a claim;
//! the sign-off accepts it only when another source recorded at another time agrees:
//! - a run directory is the runner's: it holds the uat runner's shard record, whose
//!   catalogue names every definition cell the directory recorded (a partitioned run
//!   presents every shard's record; a deleted record is a FAIL, never "takes no part");
//! - a cell's result comes from a run directory: a bundle's own manifest is not
//!   evidence of how its run ended when no results line recorded it;
//! - time runs one way: run start <= bundle <= results line, bundle <= arbitration,
//!   and nothing is dated after the sign-off;
//! - "replayed" is read from the files, not the manifest: a bundle that holds a
//!   cassette was replayed whatever its `cassette` field says;
//! - fidelity: a results line or a manifest that records a fidelity below its floor
//!   fails the cell, and the two must agree;
//! - "real" needs positive evidence: a real-auth graded cell names a real harness, its
//!   version and its binary, and keeps no stub log.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use jiff::Timestamp;
use studyloop_acceptance::fidelity::CellFidelity;
use studyloop_acceptance::ledger::{RunRecords, shard_record_file};
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_actors::llm::cassette::CASSETTE_FILE_NAME;

use crate::bundle::Bundle;
use crate::council::{Arbitration, SeatStatus};
use crate::definition::SignoffDefinition;

/// The tier whose runner writes the run directories a sign-off reads.
const TIER: &str = "uat";

/// Reasons a run directory does not carry the uat runner's shard record, or its
/// record does not answer for a definition cell the directory recorded.
pub(crate) fn shard_reasons(definition: &SignoffDefinition, records: &RunRecords) -> Vec<String> {
    let file = shard_record_file(TIER);
    let mut reasons = Vec::new();
    for run in records.runs() {
        let dir = run.dir.display();
        let Some(shard) = run.shards.iter().find(|s| s.tier == TIER) else {
            reasons.push(format!(
                "run directory {dir} has no shard record ({file}): the uat runner writes one in every run directory, so it was deleted or the directory is not the runner's; a partitioned run must present every shard's record (download the shard again)"
            ));
            continue;
        };
        let catalogue: BTreeSet<&str> = shard.catalogue.iter().map(String::as_str).collect();
        for spec in definition.cell_specs() {
            let recorded = records
                .get(&spec.id)
                .is_some_and(|t| t.records.iter().any(|r| r.dir == run.dir));
            if recorded && !catalogue.contains(spec.id.as_str()) {
                reasons.push(format!(
                    "run directory {dir} records cell `{}` but its shard record ({file}) does not list it in its catalogue: the record does not describe the run that wrote the lines",
                    spec.id
                ));
            }
        }
    }
    reasons
}

/// Reasons a required cell's only evidence of how it ended is its own bundle.
pub(crate) fn unrecorded_reasons(
    definition: &SignoffDefinition,
    records: &RunRecords,
    bundles: &BTreeMap<&str, &Bundle>,
) -> Vec<String> {
    definition
        .cell_specs()
        .iter()
        .filter(|c| c.required && records.get(&c.id).is_none())
        .filter_map(|c| bundles.get(c.id.as_str()).map(|b| (c, b)))
        .map(|(c, b)| {
            format!(
                "required cell `{}` has no results line in any run directory given: bundle {} was passed directly, and a bundle's own manifest is not independent evidence of how its run ended (pass the run directory that recorded it)",
                c.id,
                b.manifest().run_id
            )
        })
        .collect()
}

/// A stamp as an instant, or a reason naming the field and the value.
fn instant(what: &str, stamp: &str) -> Result<Timestamp, String> {
    stamp.parse::<Timestamp>().map_err(|e| {
        format!("{what} `{stamp}` is not an RFC 3339 UTC time ({e}): it was not written by this framework")
    })
}

/// Reasons the dates of a cell's evidence are not in the order they were written:
/// run start <= bundle <= results line, bundle <= arbitration, all <= `now`.
pub(crate) fn order_reasons(
    records: &RunRecords,
    bundles: &BTreeMap<&str, &Bundle>,
    arbitrations: &BTreeMap<&str, &Arbitration>,
    now: Timestamp,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut check = |what: String, stamp: &str| -> Option<Timestamp> {
        match instant(&what, stamp) {
            Ok(t) if t > now => {
                reasons.push(format!(
                    "{what} `{stamp}` is after this sign-off ({now}): evidence cannot come from the future"
                ));
                Some(t)
            }
            Ok(t) => Some(t),
            Err(e) => {
                reasons.push(e);
                None
            }
        }
    };
    let mut started: BTreeMap<&Path, Timestamp> = BTreeMap::new();
    for run in records.runs() {
        if let Some(stamp) = &run.started
            && let Some(t) = check(format!("the run marker of {}", run.dir.display()), stamp)
        {
            started.insert(run.dir.as_path(), t);
        }
    }
    let mut pairs: Vec<(String, Timestamp, String, Timestamp)> = Vec::new();
    for (cell, bundle) in bundles {
        let m = bundle.manifest();
        let bundle_what = format!("bundle {}'s date", m.run_id);
        let Some(opened) = check(bundle_what.clone(), &m.date) else {
            continue;
        };
        for r in records
            .get(cell)
            .map(|t| t.records.as_slice())
            .unwrap_or(&[])
        {
            if let Some(start) = started.get(r.dir.as_path()) {
                pairs.push((
                    format!("the run start of {}", r.dir.display()),
                    *start,
                    bundle_what.clone(),
                    opened,
                ));
            }
            if r.bundle.is_some()
                && let Some(line) = check(format!("{} (`{cell}`)", r.origin), &r.time)
            {
                pairs.push((
                    bundle_what.clone(),
                    opened,
                    format!("its results line {}", r.origin),
                    line,
                ));
            }
        }
        if let Some(a) = arbitrations.get(cell)
            && let Some(graded) = check(format!("the arbitration of `{cell}`"), &a.date)
        {
            pairs.push((
                bundle_what.clone(),
                opened,
                format!("the arbitration of `{cell}`"),
                graded,
            ));
        }
    }
    for (before, t0, after, t1) in pairs {
        if t1 < t0 {
            reasons.push(format!(
                "{after} ({t1}) is dated before {before} ({t0}): evidence is written in the order run start, bundle, results line, arbitration, sign-off, so one of them was not written when it says"
            ));
        }
    }
    reasons
}

/// Reasons a bundle was replayed although its manifest does not say so: it holds a
/// cassette file.
pub(crate) fn cassette_reasons(bundles: &BTreeMap<&str, &Bundle>) -> Vec<String> {
    let mut reasons = Vec::new();
    for (cell, bundle) in bundles {
        let m = bundle.manifest();
        let held: Vec<&str> = m
            .file_inventory
            .keys()
            .map(String::as_str)
            .filter(|p| {
                Path::new(p)
                    .file_name()
                    .is_some_and(|n| n == CASSETTE_FILE_NAME)
            })
            .collect();
        if !held.is_empty() && m.cassette.is_none() {
            reasons.push(format!(
                "bundle {} of cell `{cell}` holds a cassette ({}) but its manifest records none: a cell with a cassette was replayed, so no model answered it live and it cannot certify a real-auth run",
                m.run_id,
                held.join(", ")
            ));
        }
    }
    reasons
}

fn describe(f: &CellFidelity) -> String {
    let ratio = f
        .ratio
        .map_or_else(|| "unknown".to_owned(), |r| format!("{r:.4}"));
    format!(
        "ratio {ratio}, floor {}, pass {}, {}/{} turn(s) scored",
        f.floor, f.pass, f.scored_turns, f.turns
    )
}

/// Reasons a cell's recorded fidelity fails its floor, or its sources disagree.
pub(crate) fn fidelity_reasons(
    records: &RunRecords,
    bundles: &BTreeMap<&str, &Bundle>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut cells: BTreeSet<&str> = bundles.keys().copied().collect();
    cells.extend(records.trials().keys().map(String::as_str));
    for cell in cells {
        let mut said: Vec<(String, Option<&CellFidelity>)> = Vec::new();
        if let Some(t) = records.get(cell) {
            for r in t.records.iter().filter(|r| r.bundle.is_some()) {
                said.push((format!("results line {}", r.origin), r.fidelity.as_ref()));
            }
        }
        if let Some(b) = bundles.get(cell) {
            let m = b.manifest();
            said.push((
                format!("bundle {}'s manifest", m.run_id),
                m.fidelity.as_ref(),
            ));
        }
        for (source, f) in &said {
            if let Some(f) = f.filter(|f| !f.pass) {
                reasons.push(format!(
                    "`{cell}`: {source} records reply fidelity below its floor ({}): the transcript does not hold what the mentor said, so the cell fails",
                    describe(f)
                ));
            }
        }
        let distinct: Vec<&Option<&CellFidelity>> =
            said.iter().map(|(_, f)| f).fold(Vec::new(), |mut v, f| {
                if !v.contains(&f) {
                    v.push(f);
                }
                v
            });
        if distinct.len() > 1 {
            let each: Vec<String> = said
                .iter()
                .map(|(s, f)| format!("{s}: {}", f.map_or_else(|| "none".to_owned(), describe)))
                .collect();
            reasons.push(format!(
                "sources disagree about `{cell}`'s reply fidelity ({}): the results line and the manifest are written from one measurement",
                each.join("; ")
            ));
        }
    }
    reasons
}

/// Whether an inventory path is a stub's log (`stub-requests.jsonl`,
/// `stub-acp-frames.jsonl`, anything under `stub/`).
fn stub_file(path: &str) -> bool {
    path.split('/').any(|part| part.starts_with("stub"))
}

/// Reasons a graded real-auth cell lacks positive evidence that a real harness
/// talked to a real model.
pub(crate) fn real_reasons(
    definition: &SignoffDefinition,
    bundles: &BTreeMap<&str, &Bundle>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    for spec in definition.cell_specs().iter().filter(|c| c.graded) {
        let Some(bundle) = bundles.get(spec.id.as_str()) else {
            continue;
        };
        let m = bundle.manifest();
        if m.auth_mode != Some(AuthMode::RealAuth) {
            // Its own reason (checks::grading_reasons).
            continue;
        }
        let id = &spec.id;
        let run = &m.run_id;
        let harness = m
            .harness
            .as_deref()
            .and_then(|h| h.parse::<HarnessName>().ok());
        let Some(harness) = harness else {
            let known: Vec<&str> = studyloop_acceptance::selection::HARNESS_ORDER
                .iter()
                .map(|h| h.as_str())
                .collect();
            reasons.push(format!(
                "`{id}` is labelled real-auth but bundle {run} names harness {:?}, not a real one ({}): a real-auth cell needs a real harness",
                m.harness,
                known.join(", ")
            ));
            continue;
        };
        if m.harness_version
            .as_deref()
            .is_none_or(|v| v.trim().is_empty())
        {
            reasons.push(format!(
                "`{id}` is labelled real-auth but bundle {run} records no harness_version: a real run records the `{harness} --version` it ran"
            ));
        }
        let binary = m
            .binary_path
            .as_deref()
            .and_then(|p| Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned());
        if binary.as_deref() != Some(harness.binary()) {
            reasons.push(format!(
                "`{id}` is labelled real-auth but bundle {run} ran binary {:?}, not `{}`: a real-auth cell runs the real harness binary",
                m.binary_path,
                harness.binary()
            ));
        }
        let stubs: Vec<&str> = m
            .file_inventory
            .keys()
            .map(String::as_str)
            .filter(|p| stub_file(p))
            .collect();
        if !stubs.is_empty() {
            reasons.push(format!(
                "`{id}` is labelled real-auth but bundle {run} keeps a stub's log ({}): a stub answered, not a real model",
                stubs.join(", ")
            ));
        }
    }
    reasons
}

/// Reasons an arbitration's counts do not agree with its seats: every scored seat
/// answered (its reply cost output tokens), each answer was a judge turn, and the
/// tokens the seats report are counted in the total.
pub(crate) fn count_reasons(arbitrations: &BTreeMap<&str, &Arbitration>) -> Vec<String> {
    let mut reasons = Vec::new();
    for (cell, a) in arbitrations {
        let answered = a
            .seats
            .iter()
            .filter(|s| matches!(s.status, SeatStatus::Scored { .. }))
            .count();
        if u64::try_from(answered).unwrap_or(u64::MAX) > u64::from(a.judge_turns) {
            reasons.push(format!(
                "the arbitration of `{cell}` records {} judge turn(s) but {answered} seat(s) scored: every scored reply was a judge turn, so the seats were not asked",
                a.judge_turns
            ));
        }
        for seat in &a.seats {
            if matches!(seat.status, SeatStatus::Scored { .. })
                && seat.output_tokens.is_none_or(|t| t == 0)
            {
                reasons.push(format!(
                    "the arbitration of `{cell}` has seat `{}` scored with output_tokens {:?}: a reply that scores cost output tokens, so no model wrote it",
                    seat.id, seat.output_tokens
                ));
            }
        }
        let known: u64 = a.seats.iter().filter_map(|s| s.output_tokens).sum();
        if known > a.judge_output_tokens {
            reasons.push(format!(
                "the arbitration of `{cell}` counts {} judge output token(s) but its seats report {known}: the total counts every seat's tokens",
                a.judge_output_tokens
            ));
        }
    }
    reasons
}
