//! Unit tests of the scratch env builders: the allow-list, the deny rules at
//! the `inherit` door, real-auth mode, and the refusals of the add methods.

use super::*;

fn pointers() -> (PathBuf, Pointers<'static>) {
    let root = PathBuf::from("/tmp/sl-acc-unit");
    let p = Pointers {
        home: Path::new("/tmp/sl-acc-unit/home"),
        config_dir: Path::new("/tmp/sl-acc-unit/home/.config/studyloop"),
        state_dir: Path::new("/tmp/sl-acc-unit/home/.local/share/studyloop"),
        tmp_dir: Path::new("/tmp/sl-acc-unit/tmp"),
        socket_dir: Path::new("/tmp/sl-acc-unit/t"),
    };
    (root, p)
}

fn noisy_caller() -> CallerEnv {
    CallerEnv::from_pairs([
        ("PATH", "/opt/bin:/usr/bin"),
        ("HOME", "/root"),
        ("XDG_CONFIG_HOME", "/root/.config"),
        ("XDG_RUNTIME_DIR", "/run/user/0"),
        ("OPENAI_API_KEY", "sk-canary"),
        ("AWS_SECRET_ACCESS_KEY", "canary"),
        ("STUDYLOOP_DB", "/root/suite.db"),
        ("STUDYLOOP_SESSION_DIR", "/root/suite"),
        ("STUDYLOOP_TEST_AGENT_CMD", "stub"),
        ("STUDYLOOP_TEST_ACP_CMD", "stub"),
        ("SESSION_CONTEXT_SCOPE", "work"),
        ("TMUX", "/tmp/tmux-0/default,1,0"),
        ("TMUX_PANE", "%1"),
        ("TMUX_TMPDIR", "/tmp"),
        ("EDITOR", "vi"),
        ("TERM", "dumb"),
    ])
}

#[test]
fn scrubbed_env_is_exactly_the_allow_list() {
    let (_root, p) = pointers();
    let env = Env::scrubbed(&noisy_caller(), &p);
    let names: Vec<_> = env.iter().map(|(k, _)| k).collect();
    assert_eq!(
        names,
        [
            "HOME",
            "LANG",
            "LC_ALL",
            "PATH",
            "STUDYLOOP_STATE_DIR",
            "TERM",
            "TMPDIR",
            "TMUX_TMPDIR",
            "XDG_CACHE_HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
        ]
    );
    assert_eq!(env.get("PATH"), Some(OsStr::new("/opt/bin:/usr/bin")));
    assert_eq!(env.get("LANG"), Some(OsStr::new("C.UTF-8")));
    assert_eq!(env.get("TERM"), Some(OsStr::new("xterm-256color")));
    assert_eq!(env.get("HOME"), Some(p.home.as_os_str()));
    assert_eq!(env.get("TMUX_TMPDIR"), Some(p.socket_dir.as_os_str()));
    for (name, value) in env.iter() {
        if name.starts_with("XDG_") {
            assert!(
                Path::new(value).starts_with(p.home),
                "{name} escapes scratch"
            );
        }
    }
}

#[test]
fn scrubbed_env_keeps_caller_locale_and_has_a_path_fallback() {
    let (_root, p) = pointers();
    let caller = CallerEnv::from_pairs([("LANG", "de_DE.UTF-8")]);
    let env = Env::scrubbed(&caller, &p);
    assert_eq!(env.get("LANG"), Some(OsStr::new("de_DE.UTF-8")));
    assert_eq!(env.get("LC_ALL"), Some(OsStr::new("C.UTF-8")));
    assert_eq!(env.get("PATH"), Some(OsStr::new(FALLBACK_PATH)));
}

#[test]
fn real_auth_keeps_credentials_and_home_but_scratches_every_pointer() {
    let (_root, p) = pointers();
    let env = Env::real_auth(&noisy_caller(), &p);
    assert_eq!(env.get("OPENAI_API_KEY"), Some(OsStr::new("sk-canary")));
    assert_eq!(env.get("HOME"), Some(OsStr::new("/root")));
    assert_eq!(
        env.get("XDG_CONFIG_HOME"),
        Some(OsStr::new("/root/.config"))
    );
    assert_eq!(env.get("TERM"), Some(OsStr::new("dumb")));
    for gone in [
        "STUDYLOOP_TEST_AGENT_CMD",
        "STUDYLOOP_TEST_ACP_CMD",
        "SESSION_CONTEXT_SCOPE",
        "TMUX",
        "TMUX_PANE",
    ] {
        assert_eq!(env.get(gone), None, "{gone} leaked into real-auth env");
    }
    let cfg = p.config_dir;
    assert_eq!(
        env.get("STUDYLOOP_CONFIG"),
        Some(cfg.join("config.yaml").as_os_str())
    );
    assert_eq!(env.get("STUDYLOOP_SESSION_DIR"), Some(cfg.as_os_str()));
    assert_eq!(
        env.get("STUDYLOOP_DB"),
        Some(cfg.join("sessions.db").as_os_str())
    );
    assert_eq!(
        env.get("STUDYLOOP_STATE_DIR"),
        Some(p.state_dir.as_os_str())
    );
    assert_eq!(env.get("TMUX_TMPDIR"), Some(p.socket_dir.as_os_str()));
    let studyloop: Vec<_> = env
        .iter()
        .filter(|(k, _)| k.starts_with("STUDYLOOP_"))
        .collect();
    assert_eq!(studyloop.len(), 4, "{studyloop:?}");
}

#[test]
fn with_var_refuses_hatches_and_pointers() {
    let (_root, p) = pointers();
    let env = Env::scrubbed(&CallerEnv::default(), &p);
    let hatch = env
        .clone()
        .with_var("STUDYLOOP_TEST_AGENT_CMD", "x")
        .unwrap_err();
    assert!(hatch.to_string().contains("with_test_hatch"), "{hatch}");
    for pointer in [
        "HOME",
        "TMUX_TMPDIR",
        "TMUX",
        "XDG_DATA_HOME",
        "STUDYLOOP_STATE_DIR",
    ] {
        assert!(matches!(
            env.clone().with_var(pointer, "/elsewhere"),
            Err(EnvError::ScratchPointer { .. })
        ));
    }
    assert!(matches!(
        env.clone().with_var("A=B", "x"),
        Err(EnvError::InvalidName { .. })
    ));
    let ok = env
        .with_var("OPENAI_BASE_URL", "http://127.0.0.1:9")
        .unwrap();
    assert_eq!(
        ok.get("OPENAI_BASE_URL"),
        Some(OsStr::new("http://127.0.0.1:9"))
    );
}

#[test]
fn test_hatch_is_settable_only_by_name() {
    let (_root, p) = pointers();
    let env =
        Env::scrubbed(&CallerEnv::default(), &p).with_test_hatch(TestHatch::AgentCmd, "sh stub");
    assert_eq!(
        env.get("STUDYLOOP_TEST_AGENT_CMD"),
        Some(OsStr::new("sh stub"))
    );
}

#[test]
fn inherit_copies_plain_names_and_refuses_credentials() {
    let (_root, p) = pointers();
    let caller = noisy_caller();
    let env = Env::scrubbed(&caller, &p)
        .inherit(&caller, "EDITOR")
        .unwrap()
        .inherit(&caller, "NOT_SET_ANYWHERE")
        .unwrap();
    assert_eq!(env.get("EDITOR"), Some(OsStr::new("vi")));
    assert_eq!(env.get("NOT_SET_ANYWHERE"), None);
    for denied in [
        "OPENAI_API_KEY",
        "STUDYLOOP_DB",
        "SESSION_CONTEXT_SCOPE",
        "TMUX",
        "DATABASE_URL",
    ] {
        assert!(
            matches!(
                env.clone().inherit(&caller, denied),
                Err(EnvError::Denied { .. })
            ),
            "{denied} was inherited"
        );
    }
}

#[test]
fn find_binary_uses_only_this_envs_path() {
    let (_root, p) = pointers();
    let caller = CallerEnv::from_pairs([("PATH", "/definitely/not/here")]);
    let env = Env::scrubbed(&caller, &p);
    assert_eq!(env.find_binary("sh"), None);
    let real = Env::scrubbed(&CallerEnv::from_pairs([("PATH", "/usr/bin:/bin")]), &p);
    assert!(real.find_binary("sh").is_some());
    assert_eq!(real.find_binary("../sh"), None);
}
