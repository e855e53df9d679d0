//! What `--compare` says about adapters (issue 32 item 1): for each broken
//! step, the rows to change (`studyloop_acceptance::harness_spec::drift_rows`,
//! the one mapping table), and per harness in both runs, each adapter fact as
//! a fact: held, broke, or unknown (`None`: no step proving it was recorded),
//! with the version strings as recorded and parsed, and each session-store
//! record the new run's reader quoted as no longer parsing. The ACP
//! `initialize` capabilities are not recorded by bundles yet: unknown, with
//! that said, never "held".

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use studyloop_acceptance::harness_spec::drift_rows::{AdapterFact, RowsToChange, rows_to_change};
use studyloop_acceptance::transcript::store::{UNPARSABLE, UNPARSABLE_FIX};

use super::model::Cell;

/// A step that held in the old run and failed in the new.
#[derive(Debug, Clone, Serialize)]
pub struct BrokenStep {
    /// The trial.
    pub trial: String,
    /// Its harness as shown.
    pub harness: String,
    /// The step's name.
    pub step: String,
    /// Its recorded error.
    pub error: String,
    /// The step's checks that failed, by name.
    pub failed_checks: Vec<String>,
    /// For the step and each failed check, the rows to change.
    pub rows: Vec<RowsToChange>,
}

impl BrokenStep {
    /// `step` of `cell` broke with `error` and these failed checks.
    pub(crate) fn new(
        cell: &Cell,
        step: String,
        error: String,
        failed_checks: Vec<String>,
    ) -> Self {
        let harness = cell.harness_shown();
        let rows = std::iter::once(&step)
            .chain(&failed_checks)
            .map(|name| rows_to_change(&harness, &cell.trial, name))
            .collect();
        Self {
            trial: cell.trial.clone(),
            harness,
            step,
            error,
            failed_checks,
            rows,
        }
    }
}

/// One adapter fact of one harness under each run.
#[derive(Debug, Clone, Serialize)]
pub struct FactDiff {
    /// The harness.
    pub harness: String,
    /// The fact.
    pub fact: AdapterFact,
    /// `held` / `broke` under the old run; `None` when no step proved it.
    pub old: Option<&'static str>,
    /// The same under the new run.
    pub new: Option<&'static str>,
    /// The first failure recorded for it in the new run, when it broke.
    pub evidence: Option<String>,
}

/// A harness's version line under each run, and its parse.
#[derive(Debug, Clone, Serialize)]
pub struct VersionFact {
    /// The harness.
    pub harness: String,
    /// The old run's version line; `None` when no bundle recorded one.
    pub old: Option<String>,
    /// The new run's.
    pub new: Option<String>,
    /// `x.y.z` parsed from the old line; `None` when absent or unparsable.
    pub old_parsed: Option<String>,
    /// The same from the new line.
    pub new_parsed: Option<String>,
}

/// `x.y.z` (with a pre-release tail) out of a version line such as
/// `codex-cli 0.171.0` or `2.1.332 (Claude Code)`.
pub(crate) fn parse_version(line: &str) -> Option<String> {
    line.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .map(|w| w.strip_prefix('v').unwrap_or(w))
        .find(|w| {
            let core = w.split(['-', '+']).next().unwrap_or("");
            let parts: Vec<&str> = core.split('.').collect();
            parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_owned)
}

/// Each recorded step and check of `cell`'s latest bundle: (name, ok, error).
fn outcomes(cell: &Cell) -> Vec<(String, bool, Option<String>)> {
    let Some(bundle) = cell.latest_bundle() else {
        return Vec::new();
    };
    let Some(steps) = super::cell::step_records(bundle.dir()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    for s in &steps {
        let (Some(name), Some(ok)) = (field(s, "name"), s.get("ok").and_then(Value::as_bool))
        else {
            continue;
        };
        let checks = s
            .get("checks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for c in &checks {
            if let (Some(n), Some(k)) = (field(c, "name"), c.get("ok").and_then(Value::as_bool)) {
                out.push((n, k, field(c, "error")));
            }
        }
        // A check step's own name stands for its checks only when it has none.
        if checks.is_empty() || !ok {
            out.push((name, ok, field(s, "error")));
        }
    }
    out
}

type FactState = (Option<&'static str>, Option<String>);

/// Per (harness, fact): broke when any step or check proving it failed, held
/// when some passed and none failed; absent when none was recorded.
fn states(cells: &[Cell]) -> BTreeMap<(String, AdapterFact), FactState> {
    let mut out: BTreeMap<(String, AdapterFact), FactState> = BTreeMap::new();
    for c in cells {
        let h = c.harness_shown();
        for (name, ok, error) in outcomes(c) {
            let Some(fact) = rows_to_change(&h, &c.trial, &name).fact else {
                continue;
            };
            if fact == AdapterFact::NotAnAdapterFact {
                continue;
            }
            let e = out.entry((h.clone(), fact)).or_insert((Some("held"), None));
            if !ok && e.1.is_none() {
                *e = (
                    Some("broke"),
                    Some(format!(
                        "{}: `{name}`: {}",
                        c.trial,
                        error.as_deref().unwrap_or("no error recorded")
                    )),
                );
            }
        }
    }
    out
}

/// Every adapter fact either run recorded, per harness, old and new.
pub(crate) fn fact_diffs(old: &[Cell], new: &[Cell]) -> Vec<FactDiff> {
    let (a, b) = (states(old), states(new));
    let keys: std::collections::BTreeSet<&(String, AdapterFact)> =
        a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .map(|k| FactDiff {
            harness: k.0.clone(),
            fact: k.1,
            old: a.get(k).and_then(|s| s.0),
            new: b.get(k).and_then(|s| s.0),
            evidence: b.get(k).and_then(|s| s.1.clone()),
        })
        .collect()
}

/// Per harness, the version line each run recorded (the first seen) and its parse.
pub(crate) fn versions(old: &[Cell], new: &[Cell]) -> Vec<VersionFact> {
    let lines = |cells: &[Cell]| {
        let mut m: BTreeMap<String, String> = BTreeMap::new();
        for c in cells {
            let Some(b) = c.latest_bundle() else { continue };
            if let Some(v) = &b.manifest().harness_version {
                m.entry(c.harness_shown()).or_insert_with(|| v.clone());
            }
        }
        m
    };
    let (a, b) = (lines(old), lines(new));
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    names
        .into_iter()
        .map(|h| VersionFact {
            harness: h.clone(),
            old: a.get(h).cloned(),
            new: b.get(h).cloned(),
            old_parsed: a.get(h).and_then(|l| parse_version(l)),
            new_parsed: b.get(h).and_then(|l| parse_version(l)),
        })
        .collect()
}

/// What bundles do not record yet, named so a reader sees unknown, not held.
pub(crate) const NOT_RECORDED: [(&str, &str); 1] = [(
    "ACP initialize capabilities",
    "bundles do not record the adapter's `initialize` answer (the product's ACP client reads it); unknown",
)];

/// A session store record the new run's reader could not parse.
#[derive(Debug, Clone, Serialize)]
pub struct StoreRecord {
    /// The harness.
    pub harness: String,
    /// The trial whose step or check quoted it.
    pub trial: String,
    /// `line N: …` as the reader quoted it.
    pub record: String,
}

/// Every record a step or check error of `cells` quotes as no longer parsing
/// (the reader names one when a turn it looked for is missing), first per trial.
pub(crate) fn unparsable_records(cells: &[Cell]) -> Vec<StoreRecord> {
    cells
        .iter()
        .filter_map(|c| {
            let record = outcomes(c).into_iter().find_map(|(_, ok, error)| {
                let e = error.filter(|_| !ok)?;
                let start = e.find(UNPARSABLE)? + UNPARSABLE.len();
                let rest = &e[start..];
                let end = rest.find(UNPARSABLE_FIX).unwrap_or(rest.len());
                Some(rest[..end].to_owned())
            })?;
            Some(StoreRecord {
                harness: c.harness_shown(),
                trial: c.trial.clone(),
                record,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn version_lines_parse_to_their_version_and_others_to_none() {
        assert_eq!(
            parse_version("codex-cli 0.171.0").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(
            parse_version("2.1.332 (Claude Code)").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(parse_version("v0.0.34").as_deref(), Some("0.0.34"));
        assert_eq!(
            parse_version("1.2.3-beta.1").as_deref(),
            Some("1.2.3-beta.1")
        );
        assert_eq!(parse_version("opencode dev"), None);
        assert_eq!(parse_version("1.2"), None);
    }
}
