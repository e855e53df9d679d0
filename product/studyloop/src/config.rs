//! `config.yaml`: the keys StudyLoop reads, loading rules (flat dotted keys
//! expanded, nested form wins), errors that name the file and line, and the
//! commented template written by `studyloop config init`.
//!
//! YAML is parsed here and nowhere else (serde-saphyr). Unknown top-level keys
//! are kept in [`Loaded::unknown_keys`] for `doctor`; they are not an error.

mod error;
mod load;
mod template;

pub use error::ConfigError;
pub use load::{
    Agents, Config, Database, KNOWN_TOP_LEVEL_KEYS, Loaded, MAX_ACTIVE_TOPICS, Memory, Project,
    ScopeName, TopicEntry, load, parse,
};
pub use template::{TEMPLATE, init};
