use std::fmt::Write as _;

use super::*;

const OPERATOR: &str =
    "# my trusted folders\n[folders.\"/home/me/src\"]\ntrusted = true\ndecided_at = 1700000000\n";

/// What the product's pre-write appends (`product/studyloop/src/adapters/trust.rs`).
fn pre_write(file: &Path, dirs: &[&Path]) {
    let mut add = std::fs::read_to_string(file).unwrap_or_default();
    for d in dirs {
        let _ = write!(
            add,
            "\n[folders.\"{}\"]\ntrusted = true\ndecided_at = 1764633600\n",
            d.display()
        );
    }
    std::fs::write(file, add).unwrap();
}

#[test]
fn the_cells_entries_go_and_the_operators_stay_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("trusted_folders.toml");
    std::fs::write(&file, OPERATOR).unwrap();
    let trust = GrokTrust::at(file.clone());
    let root = Path::new("/tmp/sl-acc-abc123");
    // A sibling whose name starts like the root is not inside it.
    pre_write(
        &file,
        &[
            &root.join("home/sessions"),
            &root.join("home/sessions/s1"),
            Path::new("/tmp/sl-acc-abc1234/x"),
        ],
    );
    assert_eq!(trust.entries_inside(root).unwrap().len(), 2);
    let removed = trust.remove_inside(root).unwrap();
    assert_eq!(removed.len(), 2, "{removed:?}");
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(OPERATOR), "{after}");
    assert!(after.contains("/tmp/sl-acc-abc1234/x"), "{after}");
    assert!(!after.contains("/tmp/sl-acc-abc123/"), "{after}");
    assert!(trust.entries_inside(root).unwrap().is_empty());
}

#[test]
fn a_file_the_cell_created_is_removed_when_nothing_else_is_in_it() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("trusted_folders.toml");
    let trust = GrokTrust::at(file.clone());
    let root = Path::new("/tmp/sl-acc-new");
    pre_write(&file, &[&root.join("s")]);
    assert_eq!(trust.remove_inside(root).unwrap().len(), 1);
    assert!(!file.exists());
    // Absent is clean.
    assert!(trust.entries_inside(root).unwrap().is_empty());
}

#[test]
fn a_file_that_is_not_toml_or_not_regular_is_left_alone_and_named() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("trusted_folders.toml");
    std::fs::write(
        &file,
        "[folders.\"/tmp/sl-acc-q/s\"]\ntrusted = true\n[[[broken",
    )
    .unwrap();
    let trust = GrokTrust::at(file.clone());
    let before = std::fs::read(&file).unwrap();
    let err = trust.remove_inside(Path::new("/tmp/sl-acc-q")).unwrap_err();
    assert!(matches!(err, GrokTrustError::Parse { .. }), "{err}");
    assert!(err.to_string().contains("by hand"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // A symlink (a dotfiles repository's file) is never replaced by a copy.
    let real = home.path().join("dotfiles.toml");
    std::fs::write(&real, "[folders.\"/tmp/sl-acc-q/s\"]\ntrusted = true\n").unwrap();
    let link = home.path().join("link.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = GrokTrust::at(link.clone())
        .remove_inside(Path::new("/tmp/sl-acc-q"))
        .unwrap_err();
    assert!(matches!(err, GrokTrustError::Read { .. }), "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn the_file_is_found_under_grok_home_or_home() {
    let env = Env::from_pairs([("HOME", "/h")]);
    assert_eq!(
        GrokTrust::of(&env).unwrap().file(),
        Path::new("/h/.grok/trusted_folders.toml")
    );
    let env = env.with_var("GROK_HOME", "/g").unwrap();
    assert_eq!(
        GrokTrust::of(&env).unwrap().file(),
        Path::new("/g/trusted_folders.toml")
    );
    assert!(GrokTrust::of(&Env::default()).is_none());
}

#[test]
fn only_grok_under_real_auth_opts_in() {
    let env = || Env::from_pairs([("HOME", "/h")]);
    let (e, t) = real_auth_opt_in(AuthMode::RealAuth, HarnessName::Grok, env()).unwrap();
    assert_eq!(e.get(TRUST_VAR), Some(std::ffi::OsStr::new("1")));
    assert_eq!(
        t.unwrap().file(),
        Path::new("/h/.grok/trusted_folders.toml")
    );
    for (mode, h) in [
        (AuthMode::StubProvider, HarnessName::Grok),
        (AuthMode::Scrubbed, HarnessName::Grok),
        (AuthMode::LocalModel, HarnessName::Grok),
        (AuthMode::RealAuth, HarnessName::Codex),
    ] {
        let (e, t) = real_auth_opt_in(mode, h, env()).unwrap();
        assert!(e.get(TRUST_VAR).is_none() && t.is_none(), "{mode:?} {h:?}");
    }
}
