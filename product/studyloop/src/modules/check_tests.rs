//! `module check` against the fixture modules (one per rule, each breaking
//! exactly that rule, under tests/data/modules/) and hostile trees.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::check::check;
use super::error::ModuleError;
use super::finding::Rule;
use super::scaffold;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/modules")
}

fn rules_of(path: &Path) -> Vec<String> {
    check(path)
        .unwrap()
        .findings
        .iter()
        .map(|f| f.rule.to_string())
        .collect()
}

/// A fresh scaffold to break, in a temp dir.
fn scaffold_in(dir: &Path) -> PathBuf {
    scaffold::create(dir, "m").unwrap()
}

#[test]
fn every_fixture_breaks_exactly_its_rule_and_the_conforming_one_none() {
    assert_eq!(
        rules_of(&fixtures().join("conforming")),
        Vec::<String>::new()
    );
    for rule in Rule::ALL {
        let name = rule.to_string().to_lowercase();
        let got = check(&fixtures().join(&name)).unwrap().findings;
        assert_eq!(
            got.iter().map(|f| f.rule).collect::<Vec<_>>(),
            vec![rule],
            "fixture {name} must yield exactly one {rule} finding, got: {got:#?}"
        );
        let shown = got[0].to_string();
        assert!(
            shown.starts_with(&format!("{rule} ")) && shown.contains(':'),
            "{shown}"
        );
    }
}

#[test]
fn the_scaffold_conforms_and_its_check_prints_ready() {
    let dir = tempfile::tempdir().unwrap();
    let m = scaffold_in(dir.path());
    assert_eq!(rules_of(&m), Vec::<String>::new());
    let out = std::process::Command::new(m.join("scripts/check.sh"))
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), out.stdout.as_slice()),
        (Some(0), &b"ready\n"[..])
    );
    let own = std::process::Command::new(m.join("tests/check.sh"))
        .status()
        .unwrap();
    assert!(own.success());
    // A second `new` with the same name refuses rather than overwriting.
    assert!(matches!(
        scaffold::create(dir.path(), "m"),
        Err(ModuleError::Exists(_))
    ));
    assert!(matches!(
        scaffold::create(dir.path(), "../x"),
        Err(ModuleError::BadId(_))
    ));
}

#[test]
fn every_finding_is_listed_not_only_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let m = scaffold_in(dir.path());
    std::fs::remove_file(m.join("LICENSE")).unwrap();
    std::fs::remove_file(m.join("mentor/brief.md")).unwrap();
    let y = std::fs::read_to_string(m.join("module.yaml")).unwrap();
    std::fs::write(
        m.join("module.yaml"),
        y.replace("contract: 1", "contract: 7") + "extra: 1\n",
    )
    .unwrap();
    std::fs::write(m.join("decks/getting-started.json"), r#"{"id":"d","tasks":[{"id":"t","prompt":"p","successCriteria":[],"expectedLearningOutcome":"o","solution":"s","verification":{"checkCommand":["scripts/check.sh","a|b"]}}]}"#).unwrap();
    let got = rules_of(&m);
    for want in ["MC001", "MC002", "MC003", "MC010", "MC015", "MC017"] {
        assert!(
            got.contains(&want.to_owned()),
            "{want} missing from {got:?}"
        );
    }
    // Two MC010 findings (no criteria; solution without scaffolding).
    assert_eq!(got.iter().filter(|r| *r == "MC010").count(), 2, "{got:?}");
}

#[test]
fn context_words_match_whole_words_only() {
    use super::argv::context_word;
    assert_eq!(
        context_word("kubectl --context=prod get pods"),
        Some("--context")
    );
    assert_eq!(context_word("--kubeconfig /x"), Some("--kubeconfig"));
    assert_eq!(
        context_word("kubectl config use-context x"),
        Some("use-context")
    );
    assert_eq!(context_word("grep --context-lines 3"), None);
    assert_eq!(context_word("my-use-context-helper"), None);
}

#[test]
fn a_fifo_a_huge_file_and_hard_links_are_findings_and_never_block() {
    let dir = tempfile::tempdir().unwrap();
    let m = scaffold_in(dir.path());
    std::fs::remove_file(m.join("module.yaml")).unwrap();
    studyloop_regular_file::make_fifo_for_tests(&m.join("module.yaml"));
    studyloop_regular_file::make_fifo_for_tests(&m.join("decks/trap.json"));
    let huge = std::fs::File::create(m.join("big.txt")).unwrap();
    huge.set_len(super::tree::MAX_FILE_BYTES + 1).unwrap();
    std::fs::write(dir.path().join("outside"), "x").unwrap();
    std::fs::hard_link(dir.path().join("outside"), m.join("alias.txt")).unwrap();
    let started = Instant::now();
    let report = check(&m).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the check blocked"
    );
    let shown: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
    for want in [
        "MC013 module.yaml:1: is a FIFO",
        "MC013 decks/trap.json:1: is a FIFO",
        "MC013 big.txt:1: holds 1048577 bytes",
        "MC013 alias.txt:1: has 2 hard links",
        "MC001 module.yaml:1: module.yaml is missing",
    ] {
        assert!(
            shown.iter().any(|s| s.starts_with(want)),
            "{want} not in {shown:#?}"
        );
    }
}

#[test]
fn symlinks_anywhere_in_the_module_are_refused_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let m = scaffold_in(dir.path());
    // A link out of the module, a link to a directory outside, and a phase
    // script replaced by a link to a real executable.
    std::os::unix::fs::symlink("/etc/passwd", m.join("passwd")).unwrap();
    std::os::unix::fs::symlink("/", m.join("decks/root")).unwrap();
    std::fs::remove_file(m.join("scripts/check.sh")).unwrap();
    std::os::unix::fs::symlink("/bin/true", m.join("scripts/check.sh")).unwrap();
    let shown: Vec<String> = check(&m)
        .unwrap()
        .findings
        .iter()
        .map(ToString::to_string)
        .collect();
    for want in [
        "MC013 passwd:1: is a symlink",
        "MC013 decks/root:1: is a symlink",
        "MC013 scripts/check.sh:1: is a symlink",
        "MC007 decks/getting-started.json:",
    ] {
        assert!(
            shown.iter().any(|s| s.starts_with(want)),
            "{want} not in {shown:#?}"
        );
    }
}

#[test]
fn bad_paths_and_trees_past_the_bounds_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = check(&dir.path().join("absent")).unwrap_err().to_string();
    assert!(
        err.contains("cannot open module") && err.contains("absent"),
        "{err}"
    );
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let err = check(&dir.path().join("file")).unwrap_err().to_string();
    assert!(err.contains("is a regular file, not a directory"), "{err}");
    studyloop_regular_file::make_fifo_for_tests(&dir.path().join("fifo"));
    let err = check(&dir.path().join("fifo")).unwrap_err().to_string();
    assert!(err.contains("is a FIFO, not a directory"), "{err}");

    let deep = scaffold_in(dir.path());
    let mut p = deep.clone();
    for _ in 0..40 {
        p = p.join("d");
    }
    std::fs::create_dir_all(&p).unwrap();
    let err = check(&deep).unwrap_err().to_string();
    assert!(
        err.contains("levels deep") && err.contains("limit 12"),
        "{err}"
    );

    let wide = scaffold::create(dir.path(), "wide").unwrap();
    std::fs::create_dir(wide.join("many")).unwrap();
    for i in 0..super::tree::MAX_ENTRIES {
        std::fs::write(wide.join(format!("many/{i}")), "").unwrap();
    }
    let err = check(&wide).unwrap_err().to_string();
    assert!(err.contains("more than 2000 files"), "{err}");
}

#[test]
fn a_directory_swapped_for_a_symlink_after_the_walk_is_not_read_through() {
    let dir = tempfile::tempdir().unwrap();
    let m = scaffold_in(dir.path());
    let tree = super::tree::Tree::walk(&m).unwrap();
    // After the walk: decks/ becomes a link to a directory outside holding a
    // file of the same name (the read a racing attacker would redirect).
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("getting-started.json"), "SECRET OUTSIDE").unwrap();
    std::fs::rename(m.join("decks"), dir.path().join("decks-moved")).unwrap();
    std::os::unix::fs::symlink(&outside, m.join("decks")).unwrap();
    let err = tree
        .read("decks/getting-started.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no longer a directory"), "{err}");
    // A final-component link is refused too, and a plain read still works.
    std::os::unix::fs::symlink("/etc/hostname", m.join("mentor/link")).unwrap();
    assert!(
        tree.read("mentor/link")
            .unwrap_err()
            .to_string()
            .contains("a symlink")
    );
    assert!(tree.read("mentor/brief.md").is_ok());
}
