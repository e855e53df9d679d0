use std::os::unix::fs::PermissionsExt as _;

use super::*;

const NOW: i64 = 1_800_000_000_000;
const SECRET: &str = "sk-ant-PLANTEDsecretVALUE0123456789abcdefXYZ";

/// A HOME and a PATH dir holding an executable stand-in for `binaries` (never run).
fn world(binaries: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    for b in binaries {
        let p = bin.join(b);
        std::fs::write(&p, "#!/bin/sh\ntouch \"$0.ran\"\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (dir, home, bin)
}

fn caller(home: &std::path::Path, bin: &std::path::Path, extra: &[(&str, &str)]) -> CallerEnv {
    let mut pairs = vec![
        ("HOME".to_owned(), home.display().to_string()),
        ("PATH".to_owned(), bin.display().to_string()),
    ];
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    CallerEnv::from_pairs(pairs)
}

#[test]
fn codex_without_login_or_key_is_a_named_skip_with_the_fix() {
    let (_d, home, bin) = world(&["codex"]);
    let c = check(
        HarnessName::Codex,
        &caller(&home, &bin, &[("OPENAI_API_KEY", "  ")]),
        NOW,
    );
    assert!(!c.ready());
    assert_eq!(
        c.skip_reason().unwrap(),
        "codex: not logged in: ~/.codex/auth.json absent and OPENAI_API_KEY, CODEX_API_KEY unset; run `codex login` (or set OPENAI_API_KEY)"
    );
    // The stand-in was only stat'ed, never run.
    assert!(!bin.join("codex.ran").exists());
}

#[test]
fn a_key_or_a_usable_file_makes_it_ready_and_values_never_appear() {
    let (_d, home, bin) = world(&["claude", "codex", "grok"]);
    let c = check(
        HarnessName::Claude,
        &caller(&home, &bin, &[("ANTHROPIC_API_KEY", SECRET)]),
        NOW,
    );
    assert!(c.ready(), "{c:?}");
    assert_eq!(c.found, vec!["$ANTHROPIC_API_KEY".to_owned()]);
    assert!(!format!("{c:?}").contains(SECRET));
    // CODEX_HOME moves the file; the shown path names the variable.
    let codex_home = home.join("elsewhere");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("auth.json"),
        format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}"),
    )
    .unwrap();
    let env = caller(&home, &bin, &[("CODEX_HOME", codex_home.to_str().unwrap())]);
    let c = check(HarnessName::Codex, &env, NOW);
    assert!(c.ready(), "{c:?}");
    assert_eq!(
        c.found,
        vec!["$CODEX_HOME/auth.json: an API key (OPENAI_API_KEY field)".to_owned()]
    );
    assert!(!format!("{c:?}").contains(SECRET));
    // An expired Claude login with nothing to renew it is named, with the fix.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/.credentials.json"),
        format!(
            "{{\"claudeAiOauth\":{{\"accessToken\":\"{SECRET}\",\"expiresAt\":{}}}}}",
            NOW - 1000
        ),
    )
    .unwrap();
    let c = check(HarnessName::Claude, &caller(&home, &bin, &[]), NOW);
    let why = c.skip_reason().unwrap();
    assert!(why.starts_with("claude: not logged in: ~/.claude/.credentials.json unusable: a Claude login: access token expired at 2027-01-15T07:59:59Z"), "{why}");
    assert!(
        why.contains("ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN unset"),
        "{why}"
    );
    assert!(
        why.ends_with("run `claude` and `/login` (or set ANTHROPIC_API_KEY)"),
        "{why}"
    );
    assert!(!why.contains(SECRET));
}

#[test]
fn a_missing_binary_is_a_not_installed_skip_and_kiro_defers_to_its_probe() {
    let (_d, home, bin) = world(&[]);
    let c = check(
        HarnessName::Pi,
        &caller(&home, &bin, &[("OPENAI_API_KEY", SECRET)]),
        NOW,
    );
    let why = c.skip_reason().unwrap();
    assert!(
        why.starts_with("pi: not installed: `pi` is not on PATH; run `just harnesses`"),
        "{why}"
    );
    let c = check(HarnessName::Kiro, &caller(&home, &bin, &[]), NOW);
    assert!(
        c.skip_reason()
            .unwrap()
            .starts_with("kiro: not installed: `kiro-cli`"),
        "{c:?}"
    );
    let (_d, home, bin) = world(&["kiro-cli"]);
    let c = check(HarnessName::Kiro, &caller(&home, &bin, &[]), NOW);
    assert!(c.ready(), "{c:?}");
    assert!(c.found[0].contains("only the probe reads"), "{c:?}");
}

#[test]
fn every_harness_names_a_file_or_a_key_when_nothing_is_there() {
    let (_d, home, bin) = world(&["codex", "claude", "pi", "opencode", "grok"]);
    for h in crate::selection::HARNESS_ORDER {
        if h == HarnessName::Kiro {
            continue;
        }
        let c = check(h, &caller(&home, &bin, &[]), NOW);
        let why = c
            .skip_reason()
            .unwrap_or_else(|| panic!("{h} ready with nothing: {c:?}"));
        assert!(why.contains(" absent") && why.contains(" unset;"), "{why}");
    }
}
