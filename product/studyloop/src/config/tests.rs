//! Unit tests of config parsing: template, dotted keys, topics, errors.

use super::*;
use crate::config::TEMPLATE;

fn p() -> PathBuf {
    PathBuf::from("/cfg/config.yaml")
}

#[test]
fn template_parses_and_passes_the_gate() {
    let (cfg, unknown) = parse(&p(), TEMPLATE).unwrap();
    assert!(unknown.is_empty());
    assert_eq!(cfg.memory.default_scope, Some(ScopeName::Unclassified));
    assert_eq!(cfg.agents.priority.len(), 6);
}

#[test]
fn scratch_config_of_the_acceptance_tier_parses() {
    let (cfg, _) = parse(&p(), "topics: []\nmemory: {default_scope: unclassified}\n").unwrap();
    assert_eq!(cfg.memory.default_scope, Some(ScopeName::Unclassified));
}

#[test]
fn dotted_keys_expand_and_nested_wins() {
    let (cfg, unknown) = parse(
        &p(),
        "memory.default_scope: work\ndatabase.path: /d.db\nfoo: 1\n",
    )
    .unwrap();
    assert_eq!(cfg.memory.default_scope, Some(ScopeName::Work));
    assert_eq!(cfg.database_path(), Some("/d.db"));
    assert_eq!(unknown, vec!["foo".to_owned()]);
    let (cfg, _) = parse(
        &p(),
        "memory.default_scope: work\nmemory:\n  default_scope: personal\n",
    )
    .unwrap();
    assert_eq!(cfg.memory.default_scope, Some(ScopeName::Personal));
}

#[test]
fn topics_cap_and_slugs() {
    let (cfg, _) = parse(
        &p(),
        "topics: [SQL Window Functions, {name: Rust, slug: rusty}, c, d]\n",
    )
    .unwrap();
    assert_eq!(cfg.active_topics().len(), 3);
    assert_eq!(cfg.topics[0].slug(), "sql-window-functions");
    assert_eq!(cfg.topics[1].slug(), "rusty");
}

#[test]
fn syntax_error_names_file_and_line() {
    let err = parse(&p(), "topics: []\nmemory:\n  default_scope: [unclosed\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/cfg/config.yaml") && err.contains("line"),
        "{err}"
    );
    assert!(!err.contains('\n'), "one line: {err}");
}

#[test]
fn type_error_names_line() {
    let err = parse(&p(), "topics: []\nmemory:\n  default_scope: galaxy\n").unwrap_err();
    match &err {
        ConfigError::Malformed { line, .. } => assert_eq!(*line, Some(3), "{err}"),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn top_level_must_be_a_mapping() {
    assert!(matches!(
        parse(&p(), "- a\n- b\n"),
        Err(ConfigError::NotMapping {
            found: "a list",
            ..
        })
    ));
    assert!(parse(&p(), "").is_ok());
}

#[test]
fn a_duplicate_key_names_the_key_and_line_not_the_parser_option() {
    let err = parse(&p(), "topics: []\nsession_db: /a.db\nsession_db: /b.db\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`session_db`") && err.contains("line 3") && !err.contains("Policy"),
        "{err}"
    );
}

#[test]
fn a_non_utf8_file_names_the_byte_offset_not_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config.yaml");
    std::fs::write(&f, b"topics: [caf\xe9]\n").unwrap();
    let err = load(&f).unwrap_err().to_string();
    assert!(
        err.contains("not UTF-8") && err.contains("offset 12") && err.contains("config.yaml"),
        "{err}"
    );
    assert!(!err.contains("permissions"), "{err}");
}
