//! The manifest schema (version 1). `null` means unknown, never zero.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evidence::error::EvidenceError;
use crate::evidence::run_id::RunId;
use crate::selection::AuthMode;

/// The manifest's file name; written last, by `BundleWriter::finish` only.
pub const MANIFEST_NAME: &str = "manifest.json";

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Which tier wrote a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// The acceptance tier.
    Acceptance,
    /// The UAT sign-off tier.
    Uat,
}

/// Which product surface a cell drove.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Surface {
    /// A harness availability probe (binary + version), no product.
    Probe,
    /// `studyloop study` in tmux.
    CliTmux,
    /// The web server's ACP session over HTTP/WS.
    WebAcp,
    /// The same, driven through a real browser.
    WebAcpBrowser,
    /// `studyloop study` in tmux, the harness calling the product's MCP
    /// tools (`mcp::<harness>`).
    Mcp,
    /// A UAT journey.
    Journey,
}

/// How a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every step ran and every check passed.
    Completed,
    /// A budget (turns, tokens, a turn timeout) ended it.
    BudgetExhausted,
    /// Cancelled from outside.
    Cancelled,
    /// A step or check failed, or the run died.
    Errored,
    /// It did not run; the notes say why.
    Skipped,
}

/// Pass/skip/fail counts of the checks or cells a bundle covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Passed.
    pub passed: u64,
    /// Skipped.
    pub skipped: u64,
    /// Failed.
    pub failed: u64,
}

/// `manifest.json`. Serialised with sorted keys by the bundle writer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// The bundle's run id.
    pub run_id: String,
    /// When the bundle was opened (RFC 3339 UTC).
    pub date: String,
    /// Which tier.
    pub tier: Tier,
    /// The trial or cell name.
    pub cell: String,
    /// Which surface.
    pub surface: Surface,
    /// Harness name, when one was involved.
    pub harness: Option<String>,
    /// The harness's own version output, when known.
    pub harness_version: Option<String>,
    /// The resolved harness binary, when known.
    pub binary_path: Option<String>,
    /// How the harness reached a model.
    pub auth_mode: Option<AuthMode>,
    /// Learner backend, when a conversation ran.
    pub actor_backend: Option<String>,
    /// Learner model, when a model played the learner.
    pub actor_model: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Check counts.
    pub counts: Counts,
    /// `git rev-parse HEAD` of the workspace, when known.
    pub repo_sha: Option<String>,
    /// Whether the work tree had changes, when known.
    pub dirty: Option<bool>,
    /// sha256 of the uncommitted changes, when dirty.
    pub(crate) patch_identity: Option<String>,
    /// `<os>-<arch>`.
    pub platform: String,
    /// Rubric version graded against, when graded.
    pub rubric_version: Option<String>,
    /// Its pinned sha256.
    pub rubric_hash: Option<String>,
    /// Redaction rules version, when redaction ran.
    pub redaction_version: Option<String>,
    /// Its pinned sha256.
    pub redaction_hash: Option<String>,
    /// Every seed used, by name, so the run can be replayed.
    pub seeds: BTreeMap<String, u64>,
    /// Bundle-relative paths of the files that explain a failure.
    pub failure_artifacts: Vec<String>,
    /// sha256 of every other regular file in the bundle, by relative path.
    pub file_inventory: BTreeMap<String, String>,
    /// Free-text notes (skip reasons, early ends).
    pub notes: Vec<String>,
    /// The cell's reply fidelity (`fidelity.json` holds every turn's);
    /// absent when the cell recorded no mentor reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<crate::fidelity::CellFidelity>,
    /// The model-traffic cassette the cell recorded into or replayed from (additive:
    /// absent = none). `mode: replay` marks a cell no model answered live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<studyloop_actors::llm::cassette::CassetteEvidence>,
    /// The approvals in force for the run (`STUDYLOOP_ACC_APPROVE`: ids and reasons,
    /// never a key; additive: absent = not recorded, e.g. an older bundle). The
    /// sign-off refuses a real-auth bundle whose harness is not among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<Vec<crate::approval::ApprovalRecord>>,
    /// The billed learner capability the cell's conversation ran under
    /// (`learner:<provider>/<model>`; additive: absent = the learner billed nothing,
    /// or an older bundle). The sign-off refuses a real-auth bundle whose learner
    /// model ran without it among `approvals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learner_capability: Option<String>,
}

impl Manifest {
    /// A manifest for `cell` with every unknown field `null`, outcome
    /// `errored` until the writer says otherwise (so a bundle closed early
    /// never claims success).
    pub fn new(run_id: &RunId, tier: Tier, cell: &str, surface: Surface) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            run_id: run_id.to_string(),
            date: crate::clock::now_rfc3339(),
            tier,
            cell: cell.to_owned(),
            surface,
            harness: None,
            harness_version: None,
            binary_path: None,
            auth_mode: None,
            actor_backend: None,
            actor_model: None,
            outcome: Outcome::Errored,
            counts: Counts::default(),
            repo_sha: None,
            dirty: None,
            patch_identity: None,
            platform: platform(),
            rubric_version: None,
            rubric_hash: None,
            redaction_version: None,
            redaction_hash: None,
            seeds: BTreeMap::new(),
            failure_artifacts: Vec::new(),
            file_inventory: BTreeMap::new(),
            notes: Vec::new(),
            fidelity: None,
            cassette: None,
            approvals: None,
            learner_capability: None,
        }
    }

    /// The manifest as JSON text: keys sorted at every level, 2-space indent,
    /// trailing newline.
    ///
    /// # Errors
    /// [`EvidenceError::Json`] when a field cannot be serialised: the manifest is
    /// never written as `null` or empty in its place.
    pub fn to_json(&self) -> Result<String, EvidenceError> {
        let value = serde_json::to_value(self).map_err(|source| EvidenceError::Json {
            rel: MANIFEST_NAME.to_owned(),
            source,
        })?;
        Ok(format!("{:#}\n", sorted(value)))
    }
}

/// `<os>-<arch>` of this build, e.g. `linux-x86_64`.
pub fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

/// Rebuilds every object with its keys in sorted order, so the output is sorted
/// even if some crate in the build enables serde_json's `preserve_order`. Shared by
/// every writer of a JSON artefact whose bytes are hashed or compared (the
/// manifest, the UAT sign-off summary).
pub fn sorted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sorted).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_sorted_keys_nulls_and_a_trailing_newline() {
        let mut m = Manifest::new(
            &RunId::generate(),
            Tier::Acceptance,
            "probe::kiro",
            Surface::Probe,
        );
        m.auth_mode = Some(AuthMode::StubProvider);
        m.seeds.insert("zeta".into(), 1);
        m.seeds.insert("alpha".into(), 2);
        let text = m.to_json().unwrap();
        // The same bytes as the pretty printer it replaced, keys sorted.
        let value = sorted(serde_json::to_value(&m).unwrap());
        assert_eq!(text, serde_json::to_string_pretty(&value).unwrap() + "\n");
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\n  \"actor_backend\": null,"), "{text}");
        assert!(text.contains("\"auth_mode\": \"stub-provider\""), "{text}");
        assert!(text.contains("\"surface\": \"probe\""), "{text}");
        assert!(text.contains("\"outcome\": \"errored\""), "{text}");
        let keys: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  \""))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        let mut sorted_keys = keys.clone();
        sorted_keys.sort_unstable();
        assert_eq!(keys, sorted_keys);
        assert_eq!(keys.len(), 26);
        assert!(text.find("\"alpha\"").unwrap() < text.find("\"zeta\"").unwrap());
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
    }
}
