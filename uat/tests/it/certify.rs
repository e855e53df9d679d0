//! Issue 16 item 3, `studyloop-uat certify`: the preflight through the real `studyloop-uat`
//! binary (nothing launched on a skip: stand-in harness, tmux, node and server
//! binaries on PATH record any run; planted secret-shaped values never printed),
//! the clean-tree refusal in a temporary git repo, and real-auth receipts that
//! record their commit and refuse a dirty or unknown tree.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_redaction::{RedactionRules, Redactor};
use studyloop_uat::receipts::{collect_all, coverage_markdown, load_all};

const SECRET: &str = "sk-ant-PLANTEDsecretVALUE0123456789abcdefXYZ";
/// pi and every seat of the `release` council approved.
const APPROVE_ALL: &str = "harness:pi,judge:release/anthropic-sonnet,judge:release/openai-gpt4o,judge:release/gemini-flash";
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
/// Every program a launch would run first: the harnesses, tmux, node, the product,
/// the stub provider and the proxy.
const STAND_INS: [&str; 10] = [
    "just",
    "cargo",
    "pi",
    "codex",
    "tmux",
    "node",
    "studyloop",
    "studyloop-stub-provider",
    "litellm",
    "setsid",
];

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    repo: PathBuf,
    home: PathBuf,
    bin: PathBuf,
}

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    let (repo, home, bin) = (root.join("repo"), root.join("home"), root.join("bin"));
    for d in [&repo, &home, &bin, &root.join("tmux")] {
        std::fs::create_dir_all(d).unwrap();
    }
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "one"]);
    for name in STAND_INS {
        let p = bin.join(name);
        std::fs::write(&p, "#!/bin/sh\ntouch \"$0.ran\"\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    World {
        _dir: dir,
        root,
        repo,
        home,
        bin,
    }
}

impl World {
    fn preflight(&self, harness: &str, env: &[(&str, &str)]) -> Output {
        self.uat(&["preflight"], harness, env)
    }

    fn uat(&self, command: &[&str], harness: &str, env: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_studyloop-uat"))
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("TMUX_TMPDIR", self.root.join("tmux"))
            .envs(env.iter().copied())
            .args(command)
            .arg("--repo")
            .arg(&self.repo)
            .arg("--")
            .arg(harness)
            .output()
            .unwrap()
    }

    /// Nothing ran: no stand-in marker, no tmux socket, nothing new in HOME.
    fn assert_nothing_launched(&self) {
        for name in STAND_INS {
            assert!(
                !self.bin.join(format!("{name}.ran")).exists(),
                "the preflight ran {name}"
            );
        }
        assert_eq!(
            std::fs::read_dir(self.root.join("tmux")).unwrap().count(),
            0
        );
        assert_eq!(std::fs::read_dir(&self.home).unwrap().count(), 0);
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn issue16_certify_preflight_without_credentials_is_a_named_skip_that_launches_nothing() {
    let w = world();
    // Secret-shaped values in variables the preflight looks at but that do not
    // qualify (blank pi keys are absent keys), and in one it never needs.
    let out = w.preflight(
        "pi",
        &[
            ("MY_SERVICE_TOKEN", SECRET),
            ("OPENAI_API_KEY", " "),
            ("STUDYLOOP_ACC_APPROVE", APPROVE_ALL),
        ],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(
        all.contains("certify preflight: SKIPPED (nothing launched):"),
        "{all}"
    );
    assert!(
        all.contains("pi: not logged in: ") && all.contains("/.pi/agent/auth.json absent"),
        "{all}"
    );
    assert!(all.contains("run `pi` and `/login`"), "{all}");
    assert!(
        all.contains("council `release` seat `openai-gpt4o`: OPENAI_API_KEY is unset"),
        "{all}"
    );
    assert!(!all.contains(SECRET), "{all}");
    w.assert_nothing_launched();
    // The harness itself missing: the install fix, still nothing launched.
    std::fs::remove_file(w.bin.join("pi")).unwrap();
    let out = w.preflight("pi", &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out).contains("pi: not installed: `pi` is not on PATH; run `just harnesses`"));
    w.assert_nothing_launched();
}

#[test]
fn issue16_certify_preflight_with_keys_is_ready_and_prints_no_value() {
    let w = world();
    let keys = [
        ("ANTHROPIC_API_KEY", SECRET),
        ("OPENAI_API_KEY", SECRET),
        ("GEMINI_API_KEY", SECRET),
        ("STUDYLOOP_ACC_APPROVE", APPROVE_ALL),
    ];
    let out = w.preflight("pi", &keys);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("certify preflight: pi ready on commit "),
        "{all}"
    );
    assert!(all.contains("$ANTHROPIC_API_KEY"), "{all}");
    assert!(!all.contains(SECRET), "{all}");
    w.assert_nothing_launched();
}

#[test]
fn issue16_certify_refuses_a_dirty_tree_and_a_hostile_name_before_anything_else() {
    let w = world();
    std::fs::write(w.repo.join("a.txt"), "edited").unwrap();
    std::fs::write(w.repo.join("untracked.rs"), "x").unwrap();
    let out = w.preflight("pi", &[("ANTHROPIC_API_KEY", SECRET)]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("the tree is dirty"), "{all}");
    assert!(
        all.contains("\"a.txt\"") && all.contains("\"untracked.rs\""),
        "{all}"
    );
    assert!(all.contains("commit or stash"), "{all}");
    let pwned = w.root.join("pwned");
    for name in [
        format!("pi; touch {}", pwned.display()),
        format!("$(touch {})", pwned.display()),
        format!("`touch {}`", pwned.display()),
        "-h".to_owned(),
    ] {
        let out = w.preflight(&name, &[]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {all}");
        assert!(
            all.contains("accepted: codex, claude, kiro, pi, opencode, grok"),
            "{name}: {all}"
        );
    }
    assert!(!pwned.exists());
    w.assert_nothing_launched();
}

/// Issue 29 item 2: `certify` refuses without `--real-auth` and whenever CI is set,
/// before the preflight; with the flag, an empty HOME and no approval it exits with
/// the named skips (the capability and the entry that approves it; not logged in)
/// and launches nothing (no `just`, no `cargo`, no harness, no tmux).
#[test]
fn issue29_certify_refuses_without_the_flag_or_in_ci_and_skips_by_name_launching_nothing() {
    let w = world();
    let cert = |flag: bool, env: &[(&str, &str)]| {
        let cmd: &[&str] = if flag {
            &["certify", "--real-auth"]
        } else {
            &["certify"]
        };
        let out = w.uat(cmd, "pi", env);
        (out.status.code(), text(&out))
    };
    let (code, all) = cert(false, &[("STUDYLOOP_ACC_APPROVE", APPROVE_ALL)]);
    assert_eq!(code, Some(2), "{all}");
    assert!(
        all.contains(
            "never starts without the explicit flag: run `studyloop-uat certify pi --real-auth`"
        ),
        "{all}"
    );
    for ci in ["true", "1", "0"] {
        let (code, all) = cert(true, &[("CI", ci), ("STUDYLOOP_ACC_APPROVE", APPROVE_ALL)]);
        assert_eq!(code, Some(2), "{ci}: {all}");
        assert!(all.contains("never a CI job"), "{all}");
    }
    let (code, all) = cert(true, &[]);
    assert_eq!(code, Some(3), "{all}");
    assert!(
        all.contains("certify preflight: SKIPPED (nothing launched):"),
        "{all}"
    );
    assert!(
        all.contains("capability `harness:pi` is not approved")
            && all.contains("add the entry `harness:pi`"),
        "{all}"
    );
    assert!(all.contains("pi: not logged in: "), "{all}");
    // Only the harness approved: no judge key is asked for.
    let (code, all) = cert(true, &[("STUDYLOOP_ACC_APPROVE", "harness:pi")]);
    assert_eq!(code, Some(3), "{all}");
    assert!(!all.contains("council `release` seat"), "{all}");
    assert!(!all.contains("harness:pi` is not approved"), "{all}");
    let (code, all) = cert(true, &[("STUDYLOOP_ACC_APPROVE", "harness:*")]);
    assert_eq!(code, Some(2), "{all}");
    assert!(
        all.contains("a wildcard") && all.contains("accepted forms"),
        "{all}"
    );
    w.assert_nothing_launched();
}

fn real_auth_lane(evidence: &Path, dirty: Option<bool>) -> PathBuf {
    let id = RunId::generate();
    let mut m = Manifest::new(&id, Tier::Acceptance, "cli-tmux::pi", Surface::CliTmux);
    m.harness = Some("pi".into());
    m.outcome = Outcome::Completed;
    m.auth_mode = Some(studyloop_acceptance::selection::AuthMode::RealAuth);
    m.repo_sha = Some(SHA.into());
    m.dirty = dirty;
    BundleWriter::create(evidence.join(id.as_str()), m)
        .unwrap()
        .finish()
        .unwrap()
}

#[test]
fn issue16_real_auth_receipts_record_the_commit_and_refuse_a_dirty_or_unknown_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let evidence = tmp.path().join("run/evidence");
    std::fs::create_dir_all(&evidence).unwrap();
    let clean = real_auth_lane(&evidence, Some(false));
    let dirty = real_auth_lane(&evidence, Some(true));
    let unknown = real_auth_lane(&evidence, None);
    let out = tmp.path().join("receipts");
    let redactor = Redactor::new(&RedactionRules::load_default().unwrap());
    let collected = collect_all(&[evidence], &out, &redactor).unwrap();
    assert_eq!(collected.added, 1, "{collected:?}");
    let mut refused: Vec<&PathBuf> = collected.refused.iter().map(|(b, _)| b).collect();
    refused.sort();
    let mut expected = vec![&dirty, &unknown];
    expected.sort();
    assert_eq!(refused, expected, "{collected:?}");
    for (bundle, why) in &collected.refused {
        let word = if *bundle == dirty { "dirty" } else { "unknown" };
        assert!(
            why.contains(&format!("real-auth run on a {word} tree"))
                && why.contains("commit or stash"),
            "{why}"
        );
    }
    let all = load_all(&out).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].repo_sha.as_deref(), Some(SHA));
    assert!(
        all[0]
            .run_id
            .contains(clean.file_name().unwrap().to_str().unwrap())
    );
    let md = coverage_markdown(&all);
    assert!(
        md.contains(&format!(
            "| pi | cli-tmux | {} | completed | `0123456789ab` | 1 |",
            &all[0].date[..10]
        )),
        "{md}"
    );
}
