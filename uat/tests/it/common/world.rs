//! A genuine sign-off input built at run time with the real evidence writer, the real
//! ledger and a release-council arbitration derived from seat replies, ready to be broken
//! one way at a time (the crafted-input corpus) or planted with secrets (the output test).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use studyloop_acceptance::ledger::{RESULTS_LOG, RunLog, TrialOutcome};
use studyloop_rubrics::Facts;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::{
    ARBITRATION_JSON, Arbitration, Backend, Pin, SeatResult, SeatStatus, arbitrate, parse_reply,
};
use studyloop_uat::signoff::Pins;

use super::{TRANSCRIPT, bundle, good_reply};

pub const SMOKE: &str = "journey::smoke";
/// The shipped definition's (v3) graded cell.
pub const STUDY: &str = "journey::study_arc";
/// The shipped definition's other required, ungraded cells (each passed with its own bundle).
pub const UNGRADED: [&str; 5] = [
    "journey::architect_launch",
    "journey::mcp_lifecycle",
    "journey::now_with_active_plan",
    "journey::faults",
    "journey::drill",
];
/// The release council's seats (uat/council_v1.yaml): (id, model).
pub const SEATS: [(&str, &str); 3] = [
    ("anthropic-sonnet", "claude-sonnet-4-6"),
    ("openai-gpt4o", "gpt-4o"),
    ("gemini-flash", "gemini-3.5-flash"),
];

/// One genuine sign-off input, ready to be broken.
pub struct World {
    /// Everything lives under it.
    pub tmp: tempfile::TempDir,
    /// The shipped pins.
    pub pins: Pins,
    /// The run directory.
    pub run: RunLog,
    /// The smoke bundle.
    pub smoke: PathBuf,
    /// The graded study bundle.
    pub study: PathBuf,
    /// The bundles of the other required cells ([`UNGRADED`], in order).
    pub ungraded: Vec<PathBuf>,
}

impl World {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let pins = Pins::load_default().unwrap();
        let durable = tmp.path().join("durable");
        // In the order the runner writes: the run directory, then the bundles.
        let mut cells = vec![SMOKE, STUDY];
        cells.extend(UNGRADED);
        let run = super::run_log(&tmp.path().join("runs/run-1"), &cells);
        let smoke = bundle(&durable, SMOKE, TRANSCRIPT);
        let study = bundle(&durable, STUDY, TRANSCRIPT);
        let ungraded = UNGRADED
            .iter()
            .map(|cell| bundle(&durable, cell, TRANSCRIPT))
            .collect();
        let w = Self {
            tmp,
            pins,
            run,
            smoke,
            study,
            ungraded,
        };
        w.grade(&[4, 4, 5]);
        w.pass(SMOKE, &w.smoke);
        w.pass(STUDY, &w.study);
        for (cell, b) in UNGRADED.iter().zip(&w.ungraded) {
            w.pass(cell, b);
        }
        w
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    pub fn pass(&self, cell: &str, bundle: &Path) {
        self.run
            .record_result(cell, TrialOutcome::Passed, None, Some(bundle), None)
            .unwrap();
    }

    pub fn result(&self, cell: &str, outcome: TrialOutcome, bundle: Option<&Path>) {
        self.run
            .record_result(cell, outcome, Some("crafted"), bundle, None)
            .unwrap();
    }

    /// Replaces the results log with `lines` (keeping the run directory itself).
    pub fn results(&self, lines: &[(&str, TrialOutcome, Option<&Path>)]) {
        std::fs::remove_file(self.run.dir().join(RESULTS_LOG)).unwrap();
        for (cell, outcome, bundle) in lines {
            self.run
                .record_result(cell, *outcome, None, *bundle, None)
                .unwrap();
        }
    }

    /// The release council's arbitration of the study bundle as it is now, the seats
    /// scoring `scores` on every criterion (written as the grader writes it).
    pub fn grade(&self, scores: &[u8; 3]) {
        let replies: Vec<String> = scores.iter().map(|s| good_reply(*s)).collect();
        self.grade_with(&replies, |_| {});
    }

    pub fn grade_with(&self, replies: &[String], edit: impl FnOnce(&mut Value)) {
        let b = Bundle::open(&self.study).unwrap();
        let rubric = &self.pins.rubric;
        let seats: Vec<SeatResult> = SEATS
            .iter()
            .zip(replies)
            .map(|((id, model), text)| SeatResult {
                id: (*id).to_owned(),
                backend: Backend::Direct,
                model: (*model).to_owned(),
                output_tokens: Some(100),
                elapsed_ms: None,
                status: match parse_reply(text, rubric, &b.citable()) {
                    Ok(scores) => SeatStatus::Scored { scores },
                    Err(reason) => SeatStatus::Unscored {
                        reason: reason.to_string(),
                    },
                },
            })
            .collect();
        let facts = Facts {
            cell_required: true,
            outcome: Some("completed".into()),
            ..Facts::default()
        };
        let (rejections, criteria) = arbitrate(rubric, &seats, facts);
        let pin = |version, sha256: &str| Pin {
            version,
            sha256: sha256.to_owned(),
        };
        let a = Arbitration {
            schema_version: 1,
            bundle_run_id: b.manifest().run_id.clone(),
            cell: STUDY.to_owned(),
            manifest_digest: b.digest(),
            date: studyloop_acceptance::clock::now_rfc3339(),
            council: "release".into(),
            council_pin: pin(self.pins.roster.version(), self.pins.roster.sha256()),
            rubric_pin: pin(self.pins.rubric.version(), self.pins.rubric.sha256()),
            redaction_pin: pin(self.pins.rules.version(), self.pins.rules.sha256()),
            seats,
            rejections,
            criteria,
            judge_turns: 3,
            judge_output_tokens: 300,
        };
        let mut value = serde_json::to_value(&a).unwrap();
        edit(&mut value);
        let dir = b.arbitration_dir();
        let seats_dir = dir.join("seats");
        std::fs::create_dir_all(&seats_dir).unwrap();
        for ((id, _), text) in SEATS.iter().zip(replies) {
            std::fs::write(seats_dir.join(format!("{id}.txt")), text).unwrap();
        }
        std::fs::write(dir.join(ARBITRATION_JSON), value.to_string()).unwrap();
    }

    pub fn edit_arbitration(&self, edit: impl FnOnce(&mut Value)) {
        let path = Bundle::open(&self.study)
            .unwrap()
            .arbitration_dir()
            .join(ARBITRATION_JSON);
        let mut value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        edit(&mut value);
        std::fs::write(&path, value.to_string()).unwrap();
    }

    /// Rewrites `bundle`'s manifest (its inventory untouched, so the files still verify)
    /// and, when it is the graded bundle, grades it again so the arbitration is current.
    pub fn edit_manifest(&self, bundle: &Path, edit: impl FnOnce(&mut Value)) {
        let path = bundle.join("manifest.json");
        let mut value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        edit(&mut value);
        let mut text = serde_json::to_string_pretty(&value).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        if bundle == self.study {
            self.grade(&[4, 4, 5]);
        }
    }
}

impl World {
    /// Rewrites every results line of `cell` (the run directory's own file).
    pub fn edit_results(&self, cell: &str, edit: impl Fn(&mut Value)) {
        let path = self.run.dir().join(RESULTS_LOG);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            let mut value: Value = serde_json::from_str(line).unwrap();
            if value["trial"] == cell {
                edit(&mut value);
            }
            out.push_str(&value.to_string());
            out.push('\n');
        }
        std::fs::write(&path, out).unwrap();
    }

    /// Rewrites one JSON file of the run directory (`run.json`, `shard-uat.json`);
    /// `None` deletes it.
    pub fn edit_run_file(&self, name: &str, edit: impl FnOnce(&mut Value) -> bool) {
        let path = self.run.dir().join(name);
        let mut value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if edit(&mut value) {
            std::fs::write(&path, value.to_string()).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// Adds `rel` with `bytes` to `bundle` and to its inventory (so it verifies).
    pub fn add_file(&self, bundle: &Path, rel: &str, bytes: &[u8]) {
        let path = bundle.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        chmod(&path, 0o600);
        let hash = studyloop_acceptance::evidence::hash_file(&path).unwrap();
        self.edit_manifest(bundle, |m| m["file_inventory"][rel] = Value::from(hash));
    }
}

pub fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

pub fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
