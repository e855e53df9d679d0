//! The keys StudyLoop reads from `config.yaml` and the loading rules: flat dotted keys
//! expanded (the nested form wins), unknown top-level keys kept for `doctor`, errors
//! that name the file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::ConfigError;

/// The most configured topics that count; later entries are ignored (reference
/// `MAX_ACTIVE_TOPICS`).
pub const MAX_ACTIVE_TOPICS: usize = 3;

/// Every top-level key the reference product's config knows; anything else is
/// reported by `doctor` as unknown.
pub const KNOWN_TOP_LEVEL_KEYS: &[&str] = &[
    "obsidian_base",
    "notes_path",
    "session_db",
    "state_dir",
    "sync_remote",
    "sync_user",
    "web_port",
    "browser",
    "lan_username",
    "lan_password",
    "topics",
    "memory",
    "agents",
    "pomodoro",
    "content",
    "review",
    "card_generator",
    "obsidian",
    "second_brain",
    "knowledge_domains",
    "notebooklm",
    "tts",
    "focus",
    "database",
    "semantic_search",
    "hosts",
    "logging",
    "thresholds",
    "excluded_dirs",
    "multiplexer",
];

/// A memory scope (reference `ScopePolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeName {
    /// Personal study.
    Personal,
    /// Work study.
    Work,
    /// No classification (what the acceptance scratch config uses).
    Unclassified,
}

impl ScopeName {
    /// Accepted spellings, for error messages.
    pub const ACCEPTED: &'static str = "personal, work, unclassified";

    /// Parse a scope name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "personal" => Some(Self::Personal),
            "work" => Some(Self::Work),
            "unclassified" => Some(Self::Unclassified),
            _ => None,
        }
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Personal => "personal",
            Self::Work => "work",
            Self::Unclassified => "unclassified",
        }
    }
}

/// A configured topic: a bare string or a mapping.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum TopicEntry {
    /// `- SQL`
    Name(String),
    /// `- {name: SQL, slug: sql}`
    Full {
        /// Display name.
        name: String,
        /// Slug; defaults to the slugified name.
        #[serde(default)]
        slug: Option<String>,
    },
}

impl TopicEntry {
    /// The display name.
    pub fn name(&self) -> &str {
        match self {
            Self::Name(n) | Self::Full { name: n, .. } => n,
        }
    }
    /// The slug (explicit, or derived from the name).
    pub fn slug(&self) -> String {
        match self {
            Self::Full { slug: Some(s), .. } => s.clone(),
            _ => crate::ids::config_slug(self.name()),
        }
    }
}

/// A project whose roots select a scope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Project {
    /// The scope for work under the roots.
    pub scope: ScopeName,
    /// Absolute directories.
    #[serde(default)]
    pub roots: Vec<PathBuf>,
}

/// `memory:`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Memory {
    /// Scope when no env override and no project matches.
    #[serde(default)]
    pub default_scope: Option<ScopeName>,
    /// Projects by id.
    #[serde(default)]
    pub projects: BTreeMap<String, Project>,
}

/// `agents:`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Agents {
    /// Detection order when `--agent` and `STUDYLOOP_AGENT` are absent.
    #[serde(default)]
    pub priority: Vec<String>,
}

/// `database:`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Database {
    /// DB path.
    #[serde(default)]
    pub path: Option<String>,
}

/// The keys StudyLoop reads. Missing file = all defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Durable data dir.
    pub state_dir: Option<String>,
    /// DB path (wins over `database.path`).
    pub session_db: Option<String>,
    /// `database.path`.
    pub database: Option<Database>,
    /// Configured topics (first three count).
    pub topics: Vec<TopicEntry>,
    /// Scope policy.
    pub memory: Memory,
    /// Harness detection order.
    pub agents: Agents,
    /// Web UI port (phase 2).
    pub web_port: Option<u16>,
}

impl Config {
    /// `database.path`, if set.
    pub fn database_path(&self) -> Option<&str> {
        self.database.as_ref().and_then(|d| d.path.as_deref())
    }

    /// The active configured topics (at most [`MAX_ACTIVE_TOPICS`]).
    pub fn active_topics(&self) -> &[TopicEntry] {
        &self.topics[..self.topics.len().min(MAX_ACTIVE_TOPICS)]
    }
}

/// A loaded config and what `doctor` needs to know about it.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The file (which may not exist).
    pub path: PathBuf,
    /// Whether it existed.
    pub exists: bool,
    /// The parsed keys.
    pub config: Config,
    /// Top-level keys not in [`KNOWN_TOP_LEVEL_KEYS`] (after dotted expansion).
    pub unknown_keys: Vec<String>,
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "an empty document",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "a mapping",
    }
}

fn malformed(path: &Path, err: &serde_saphyr::Error) -> ConfigError {
    let mut inner = err;
    while let serde_saphyr::Error::WithSnippet { error, .. } = inner {
        inner = &**error;
    }
    // The parser's own text for this one names its option type; say what the
    // user must change instead.
    let message = if let serde_saphyr::Error::DuplicateMappingKey { key, .. } = inner {
        match key {
            Some(k) => format!("the key `{k}` appears twice in the same mapping; keep one"),
            None => "a key appears twice in the same mapping; keep one".to_owned(),
        }
    } else {
        let mut options = serde_saphyr::RenderOptions::default();
        options.snippets = serde_saphyr::SnippetMode::Off;
        err.render_with_options(options)
            .lines()
            .next()
            .unwrap_or("invalid YAML")
            .trim()
            .to_owned()
    };
    ConfigError::Malformed {
        path: path.to_owned(),
        line: err.location().map(|l| l.line()),
        message,
    }
}

/// Insert `value` at `path` unless something is already there (nested wins).
fn insert_missing(
    map: &mut serde_json::Map<String, serde_json::Value>,
    path: &[&str],
    value: serde_json::Value,
) {
    match path {
        [] => {}
        [leaf] => {
            map.entry((*leaf).to_owned()).or_insert(value);
        }
        [head, rest @ ..] => {
            let slot = map
                .entry((*head).to_owned())
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let serde_json::Value::Object(inner) = slot {
                insert_missing(inner, rest, value);
            }
        }
    }
}

/// Expand `a.b: v` into `a: {b: v}`; where both forms exist the nested one wins.
fn expand_dotted(map: &mut serde_json::Map<String, serde_json::Value>) {
    let dotted: Vec<String> = map.keys().filter(|k| k.contains('.')).cloned().collect();
    for key in dotted {
        if let Some(value) = map.remove(&key) {
            let parts: Vec<&str> = key.split('.').collect();
            insert_missing(map, &parts, value);
        }
    }
}

/// Parse config text. `path` is only used in error messages.
pub fn parse(path: &Path, text: &str) -> Result<(Config, Vec<String>), ConfigError> {
    let value: serde_json::Value = serde_saphyr::from_str(text).map_err(|e| malformed(path, &e))?;
    let mut map = match value {
        serde_json::Value::Object(m) => m,
        // An empty file is an empty config, not an error.
        serde_json::Value::Null => return Ok((Config::default(), Vec::new())),
        other => {
            return Err(ConfigError::NotMapping {
                path: path.to_owned(),
                found: kind(&other),
            });
        }
    };
    expand_dotted(&mut map);
    let unknown = map
        .keys()
        .filter(|k| !KNOWN_TOP_LEVEL_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    match serde_json::from_value::<Config>(serde_json::Value::Object(map)) {
        Ok(config) => Ok((config, unknown)),
        Err(json_err) => {
            // Re-parse typed straight from YAML to recover the line number of
            // the bad value; dotted keys are the one case it cannot locate.
            match serde_saphyr::from_str::<Config>(text) {
                Err(e) => Err(malformed(path, &e)),
                Ok(_) => Err(ConfigError::Malformed {
                    path: path.to_owned(),
                    line: None,
                    message: json_err.to_string(),
                }),
            }
        }
    }
}

/// Load the config file at `path`; a missing file is the default config.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let bytes = match crate::fsutil::read_user(path, crate::fsutil::USER_FILE_LIMIT) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Ok(Loaded {
                path: path.to_owned(),
                ..Loaded::default()
            });
        }
        Err(source) => {
            return Err(ConfigError::Unreadable {
                path: path.to_owned(),
                source,
            });
        }
    };
    let text = String::from_utf8(bytes).map_err(|e| ConfigError::NotUtf8 {
        path: path.to_owned(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    let (config, unknown_keys) = parse(path, &text)?;
    Ok(Loaded {
        path: path.to_owned(),
        exists: true,
        config,
        unknown_keys,
    })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
