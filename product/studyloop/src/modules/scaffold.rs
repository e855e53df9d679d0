//! `module new NAME`: a conforming module with one offline drill whose check
//! script prints `ready` and exits 0. The files are constants here so the
//! scaffold and its test (it must pass `module check` as written) share them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::{ModuleError, io};
use super::manifest::is_slug;

/// The scaffold's one deck id and task id (`NAME/getting-started/ready-01`).
pub(crate) const DECK_ID: &str = "getting-started";
/// See [`DECK_ID`].
pub(crate) const TASK_ID: &str = "ready-01";

fn files(id: &str) -> Vec<(&'static str, String, u32)> {
    let manifest = format!(
        "# The module manifest (contract v1, see docs/modules.md).\n\
id: {id}\ncontract: 1\nversion: \"0.1.0\"\ntitle: \"{id}\"\ntopic: \"Getting started with drills\"\n\
license: MIT\nmaintainers:\n  - \"You <you@example.org>\"\nprerequisites: []\n\
capabilities:\n  - terminal\n  - check\ntarget:\n  kind: workdir\n"
    );
    let deck = format!(
        r#"{{
  "id": "{DECK_ID}",
  "title": "Getting started",
  "tasks": [
    {{
      "id": "{TASK_ID}",
      "prompt": "Run the check phase and read its result.",
      "successCriteria": ["studyloop drill check {id}/{DECK_ID}/{TASK_ID} reports passed"],
      "expectedLearningOutcome": "You know how a drill's check phase runs and reports.",
      "hint": "The check script only prints ready.",
      "mentorNotes": "An offline drill: nothing to set up or clean up.",
      "verification": {{
        "checkCommand": ["scripts/check.sh"],
        "timeoutSeconds": 30
      }}
    }}
  ]
}}
"#
    );
    let readme = format!(
        "# {id}\n\nA StudyLoop module (contract v1).\n\n## Prerequisites\n\nNone: the drill is offline.\n\n\
## What runs\n\n`scripts/check.sh` (the check phase of `{DECK_ID}/{TASK_ID}`): prints `ready`.\n\n\
## Data collected\n\nNone beyond the check's exit code and output, kept for the attempt only.\n\n\
## Limits\n\nOne offline drill; no cluster, no network.\n"
    );
    let check = "#!/bin/sh\n# The check phase: exit 0 passed, 1 failed, 2 or more could not run.\necho ready\nexit 0\n";
    let test = "#!/bin/sh\n# The module's own offline test: the check script must print ready.\nset -eu\n[ \"$(\"$(dirname \"$0\")/../scripts/check.sh\")\" = ready ]\n";
    vec![
        ("module.yaml", manifest, 0o644),
        ("decks/getting-started.json", deck, 0o644),
        ("scripts/check.sh", check.to_owned(), 0o755),
        ("tests/check.sh", test.to_owned(), 0o755),
        (
            "mentor/brief.md",
            format!("Module `{id}`: one offline drill ({DECK_ID}/{TASK_ID}). Advisory only.\n"),
            0o644,
        ),
        ("README.md", readme, 0o644),
        (
            "LICENSE",
            "MIT License\n\nReplace this with the module's license text.\n".to_owned(),
            0o644,
        ),
        (
            "CHANGELOG.md",
            "# Changelog\n\n## 0.1.0\n\n- First version (scaffolded by studyloop module new).\n"
                .to_owned(),
            0o644,
        ),
    ]
}

/// Writes a new module named `name` under `parent`; returns its directory.
/// Refuses a name that is not a slug and a path that exists.
pub(crate) fn create(parent: &Path, name: &str) -> Result<PathBuf, ModuleError> {
    if !is_slug(name) {
        return Err(ModuleError::BadId(name.to_owned()));
    }
    let dir = parent.join(name);
    // create_dir (not create_dir_all) on the root: refuses one that exists, atomically.
    std::fs::create_dir(&dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => ModuleError::Exists(dir.clone()),
        _ => ModuleError::Io {
            action: "cannot create",
            path: dir.clone(),
            source: e,
        },
    })?;
    for (rel, body, mode) in files(name) {
        let path = dir.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io("cannot create", p))?;
        }
        std::fs::write(&path, body).map_err(io("cannot write", &path))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(io("cannot chmod", &path))?;
    }
    Ok(dir)
}
