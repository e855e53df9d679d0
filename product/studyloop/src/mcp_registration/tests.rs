//! Registration per harness on real files: the entry each pinned harness
//! reads, idempotent re-runs, the user's other entries kept, an entry
//! pointing elsewhere replaced with a warning, and symlinks never followed
//! out of the tree the config belongs to.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{McpServerSpec, Registered, RegistrationError, Target, register};
use crate::adapters::Harness;
use crate::env::Env;

fn spec() -> McpServerSpec {
    McpServerSpec {
        name: "studyloop",
        command: PathBuf::from("/opt/sl/bin/studyloop-mcp"),
        args: Vec::new(),
        env: vec![
            ("HOME".into(), "/home/u".into()),
            ("SESSION_CONTEXT_SCOPE".into(), "work".into()),
        ],
    }
}

fn reg(h: Harness, env: &Env, home: &Path, session: Option<&Path>) -> super::Outcome {
    let t = Target {
        env,
        home,
        session_dir: session,
    };
    register(h, &spec(), &t).unwrap()
}

fn json_file(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn each_harness_gets_the_entry_it_reads_and_a_rerun_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let session = root.path().join("sessions/s1");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&session).unwrap();
    let env = Env::default();
    let want_env = json!({"HOME": "/home/u", "SESSION_CONTEXT_SCOPE": "work"});
    let cases: [(Harness, PathBuf, &str, Value); 4] = [
        (
            Harness::Claude,
            home.join(".claude.json"),
            "/mcpServers/studyloop",
            json!({"type": "stdio", "command": "/opt/sl/bin/studyloop-mcp", "args": [], "env": want_env}),
        ),
        (
            Harness::Opencode,
            home.join(".config/opencode/opencode.json"),
            "/mcp/studyloop",
            json!({"type": "local", "command": ["/opt/sl/bin/studyloop-mcp"], "environment": want_env, "enabled": true}),
        ),
        (
            Harness::Kiro,
            home.join(".kiro/agents/study-mentor.json"),
            "/mcpServers/studyloop",
            json!({"command": "/opt/sl/bin/studyloop-mcp", "args": [], "env": want_env}),
        ),
        (
            Harness::Grok,
            session.join(".grok/settings.json"),
            "/mcpServers/studyloop",
            json!({"name": "studyloop", "transport": {"type": "stdio", "command": "/opt/sl/bin/studyloop-mcp", "args": [], "env": want_env}}),
        ),
    ];
    for (h, file, pointer, entry) in cases {
        let first = reg(h, &env, &home, Some(&session));
        assert_eq!(
            first.registered,
            Registered::Written(fs::canonicalize(&file).unwrap()),
            "{h:?}"
        );
        assert_eq!(json_file(&file).pointer(pointer), Some(&entry), "{h:?}");
        let mode = fs::metadata(&file).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        let bytes = fs::read(&file).unwrap();
        let again = reg(h, &env, &home, Some(&session));
        assert!(
            matches!(again.registered, Registered::Unchanged(_)),
            "{h:?}"
        );
        assert_eq!(fs::read(&file).unwrap(), bytes, "{h:?} rerun");
        assert_eq!(again.warning, None);
    }
    let codex = reg(Harness::Codex, &env, &home, None);
    let toml = fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert_eq!(
        toml,
        "[mcp_servers.studyloop]\ncommand = \"/opt/sl/bin/studyloop-mcp\"\nargs = []\n\n\
         [mcp_servers.studyloop.env]\nHOME = \"/home/u\"\nSESSION_CONTEXT_SCOPE = \"work\"\n"
    );
    assert!(matches!(codex.registered, Registered::Written(_)));
    assert!(matches!(
        reg(Harness::Codex, &env, &home, None).registered,
        Registered::Unchanged(_)
    ));
    assert!(matches!(
        reg(Harness::Pi, &env, &home, None).registered,
        Registered::Unsupported(why) if why.contains("No MCP")
    ));
    assert!(matches!(
        reg(Harness::Grok, &env, &home, None).registered,
        Registered::Unsupported(_)
    ));
}

#[test]
fn the_users_entries_stay_and_a_studyloop_entry_elsewhere_is_replaced_with_a_warning() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().to_owned();
    let codex_home = root.path().join("ch");
    fs::create_dir_all(&codex_home).unwrap();
    fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true,"mcpServers":{"mine":{"command":"/bin/mine"},"studyloop":{"command":"/old/studyloop-mcp"}}}"#,
    )
    .unwrap();
    let user_toml = "model = \"m\"\n\n[mcp_servers.mine]\ncommand = \"/bin/mine\"\n\n[mcp_servers.studyloop]\ncommand = \"/old/py\"\n";
    fs::write(codex_home.join("config.toml"), user_toml).unwrap();
    let env = Env::from_pairs([("CODEX_HOME", codex_home.as_os_str())]);
    let out = reg(Harness::Claude, &env, &home, None);
    let w = out.warning.unwrap();
    assert!(
        w.contains("/old/studyloop-mcp") && w.contains(".claude.json"),
        "{w}"
    );
    let v = json_file(&home.join(".claude.json"));
    assert_eq!(v["hasCompletedOnboarding"], true);
    assert_eq!(v["mcpServers"]["mine"]["command"], "/bin/mine");
    assert_eq!(
        v["mcpServers"]["studyloop"]["command"],
        "/opt/sl/bin/studyloop-mcp"
    );
    let out = reg(Harness::Codex, &env, &home, None);
    assert!(out.warning.unwrap().contains("/old/py"));
    let toml = fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        toml.starts_with("model = \"m\"\n\n[mcp_servers.mine]\ncommand = \"/bin/mine\"\n"),
        "{toml}"
    );
    assert!(
        !toml.contains("/old/py") && toml.contains("/opt/sl/bin/studyloop-mcp"),
        "{toml}"
    );
    assert!(!home.join(".codex").exists(), "CODEX_HOME is honoured");
}

#[test]
fn symlinks_are_never_followed_out_of_the_configs_tree_and_bad_files_are_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let outside = root.path().join("outside");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&outside).unwrap();
    let env = Env::default();
    let t = Target {
        env: &env,
        home: &home,
        session_dir: None,
    };
    // A file symlink, a directory symlink and a dangling link, each pointing out.
    fs::write(outside.join("victim.json"), "{}").unwrap();
    symlink(outside.join("victim.json"), home.join(".claude.json")).unwrap();
    fs::create_dir_all(home.join(".config")).unwrap();
    symlink(&outside, home.join(".config/opencode")).unwrap();
    symlink(outside.join("codex-new"), home.join(".codex")).unwrap();
    for h in [Harness::Claude, Harness::Opencode, Harness::Codex] {
        let err = register(h, &spec(), &t).unwrap_err();
        assert!(
            matches!(err, RegistrationError::OutsideRoot { .. }),
            "{h:?}: {err}"
        );
        assert!(err.to_string().contains("by hand"), "{err}");
    }
    assert_eq!(
        fs::read_to_string(outside.join("victim.json")).unwrap(),
        "{}"
    );
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing created outside"
    );
    // A symlink that stays inside HOME is followed; the link itself is kept.
    fs::remove_file(home.join(".claude.json")).unwrap();
    fs::create_dir_all(home.join("dotfiles")).unwrap();
    fs::write(home.join("dotfiles/claude.json"), "{\"theme\":\"dark\"}").unwrap();
    symlink(home.join("dotfiles/claude.json"), home.join(".claude.json")).unwrap();
    register(Harness::Claude, &spec(), &t).unwrap();
    assert!(
        fs::symlink_metadata(home.join(".claude.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        json_file(&home.join("dotfiles/claude.json"))["theme"],
        "dark"
    );
    // Not JSON: refused by name, left byte for byte.
    fs::create_dir_all(home.join(".kiro/agents")).unwrap();
    fs::write(home.join(".kiro/agents/study-mentor.json"), "// jsonc {").unwrap();
    let err = register(Harness::Kiro, &spec(), &t)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("study-mentor.json") && err.contains("left untouched"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(home.join(".kiro/agents/study-mentor.json")).unwrap(),
        "// jsonc {"
    );
    // Codex's config.toml that is not TOML: refused by name, left byte for byte.
    fs::remove_file(home.join(".codex")).unwrap();
    fs::create_dir_all(home.join(".codex")).unwrap();
    let broken = "model = \"o3\"\n[mcp_servers.studyloop\ncommand = \"x\"\n";
    fs::write(home.join(".codex/config.toml"), broken).unwrap();
    let err = register(Harness::Codex, &spec(), &t).unwrap_err();
    assert!(matches!(err, RegistrationError::BadToml { .. }), "{err}");
    let err = err.to_string();
    assert!(
        err.contains("config.toml")
            && err.contains("not valid TOML")
            && err.contains("left untouched"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(home.join(".codex/config.toml")).unwrap(),
        broken
    );
}

#[test]
fn a_cli_session_registers_allows_claude_and_turns_problems_into_warnings() {
    let root = tempfile::tempdir().unwrap();
    let (mut ctx, paths, scope) = super::spec::tests::fixture(root.path(), &[]);
    let (home, bin) = (paths.home.clone(), root.path().join("bin"));
    let session = paths.session.dir.join("sessions/study-x");
    fs::create_dir_all(&session).unwrap();
    let run = |ctx: &crate::context::Ctx, h| {
        super::register_for_session(ctx, &paths, &scope, h, &session)
    };
    assert_eq!(run(&ctx, Harness::Claude), Vec::<String>::new());
    let allow = json_file(&session.join(".claude/settings.local.json"));
    assert_eq!(allow["permissions"]["allow"], json!(["mcp__studyloop"]));
    assert_eq!(
        json_file(&home.join(".claude.json"))["mcpServers"]["studyloop"]["command"],
        json!(bin.join("studyloop-mcp").display().to_string())
    );
    let before = fs::read(session.join(".claude/settings.local.json")).unwrap();
    assert_eq!(run(&ctx, Harness::Claude), Vec::<String>::new());
    assert_eq!(
        fs::read(session.join(".claude/settings.local.json")).unwrap(),
        before
    );
    assert_eq!(run(&ctx, Harness::Pi), Vec::<String>::new());
    // A broken config is a warning, not a failed start; nothing is overwritten.
    fs::create_dir_all(home.join(".config/opencode")).unwrap();
    fs::write(home.join(".config/opencode/opencode.json"), "{ // jsonc").unwrap();
    let w = run(&ctx, Harness::Opencode);
    assert!(w.len() == 1 && w[0].contains("opencode.json"), "{w:?}");
    assert_eq!(
        fs::read_to_string(home.join(".config/opencode/opencode.json")).unwrap(),
        "{ // jsonc"
    );
    ctx.exe = root.path().join("nowhere/studyloop");
    let w = run(&ctx, Harness::Codex);
    assert!(
        w.len() == 1 && w[0].contains("studyloop-mcp is not installed"),
        "{w:?}"
    );
    assert!(!home.join(".codex").exists());
}
