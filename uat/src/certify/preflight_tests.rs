use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use super::*;

const NOW: i64 = 1_800_000_000_000;
const SECRET: &str = "sk-PLANTEDsecretVALUE0123456789abcdefXYZ";

/// A committed git repo, a HOME and a PATH with a stand-in `codex` (never run).
struct World {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    home: PathBuf,
    bin: PathBuf,
}

fn git(repo: &Path, args: &[&str]) {
    let ok = Command::new("git")
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
    assert!(ok.status.success(), "git {args:?}: {ok:?}");
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    let bin = dir.path().join("bin");
    for d in [&repo, &home, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    std::fs::write(repo.join("b.txt"), "b").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "one"]);
    let codex = bin.join("codex");
    std::fs::write(&codex, "#!/bin/sh\ntouch \"$0.ran\"\n").unwrap();
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
    World {
        _dir: dir,
        repo,
        home,
        bin,
    }
}

fn caller(w: &World, extra: &[(&str, &str)]) -> CallerEnv {
    let mut pairs = vec![
        ("HOME".to_owned(), w.home.display().to_string()),
        (
            "PATH".to_owned(),
            format!("{}:/usr/local/bin:/usr/bin:/bin", w.bin.display()),
        ),
    ];
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    CallerEnv::from_pairs(pairs)
}

/// Codex and every `release` seat approved, unless `extra` sets the approvals.
const APPROVE_ALL: &str = "harness:codex,judge:release/anthropic-sonnet,judge:release/openai-gpt4o,judge:release/gemini-flash";

fn run(w: &World, name: &str, extra: &[(&str, &str)]) -> Result<Ready, PreflightError> {
    let roster = Roster::load_default().unwrap();
    let mut extra = extra.to_vec();
    if !extra.iter().any(|(k, _)| *k == "STUDYLOOP_ACC_APPROVE") {
        extra.push(("STUDYLOOP_ACC_APPROVE", APPROVE_ALL));
    }
    preflight(name, &caller(w, &extra), &w.repo, &roster, "release", NOW)
}

/// Issue 29: the harness unapproved is a named skip naming the entry; judges not
/// approved are no skip (their keys are not even asked for), but listed for the
/// graded journey; a malformed or unknown entry refuses before anything else.
#[test]
fn approvals_decide_what_the_preflight_asks_for() {
    let w = world();
    let e = run(&w, "codex", &[("STUDYLOOP_ACC_APPROVE", "harness:pi")]).unwrap_err();
    let PreflightError::Skip { reasons } = &e else {
        panic!("{e}")
    };
    assert!(
        reasons[0].contains("capability `harness:codex` is not approved")
            && reasons[0].contains("add the entry `harness:codex`"),
        "{reasons:?}"
    );
    // Only the harness approved, every harness credential present: ready, judges
    // listed as unapproved, no judge key demanded.
    let ready = run(
        &w,
        "codex",
        &[
            ("STUDYLOOP_ACC_APPROVE", "harness:codex"),
            ("OPENAI_API_KEY", SECRET),
        ],
    )
    .unwrap();
    assert_eq!(ready.unapproved_judges.len(), 3, "{ready:?}");
    assert!(
        ready.unapproved_judges[0].contains("judge:release/anthropic-sonnet"),
        "{ready:?}"
    );
    for bad in [
        "harness:*",
        "judge:release/ghost",
        "harness:codex,harness:codex",
    ] {
        let e = run(&w, "codex", &[("STUDYLOOP_ACC_APPROVE", bad)]).unwrap_err();
        assert!(matches!(e, PreflightError::Approvals(_)), "{bad}: {e}");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("accepted forms"), "{e}");
    }
}

const COUNCIL_KEYS: [(&str, &str); 3] = [
    ("ANTHROPIC_API_KEY", SECRET),
    ("OPENAI_API_KEY", SECRET),
    ("GEMINI_API_KEY", SECRET),
];

#[test]
fn an_unknown_or_hostile_name_fails_naming_the_accepted_set() {
    let w = world();
    for name in [
        "pi; touch /tmp/pwned",
        "$(id)",
        "`id`",
        "codex\n",
        "",
        "PI",
        "../codex",
    ] {
        let e = run(&w, name, &[]).unwrap_err();
        assert!(
            matches!(e, PreflightError::UnknownHarness { .. }),
            "{name:?}: {e}"
        );
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(
            text.contains("accepted: codex, claude, kiro, pi, opencode, grok"),
            "{text}"
        );
    }
    assert!(!w.bin.join("codex.ran").exists());
}

#[test]
fn a_dirty_tree_is_refused_naming_every_path_and_the_fix() {
    let w = world();
    std::fs::write(w.repo.join("a.txt"), "changed").unwrap();
    std::fs::write(w.repo.join("new file.txt"), "untracked").unwrap();
    git(&w.repo, &["mv", "b.txt", "c.txt"]);
    let e = run(&w, "codex", &COUNCIL_KEYS).unwrap_err();
    let PreflightError::DirtyTree { paths, .. } = &e else {
        panic!("{e}")
    };
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(sorted, ["a.txt", "c.txt", "new file.txt"], "{e}");
    let text = e.to_string();
    assert!(text.contains("\"new file.txt\""), "{text}");
    assert!(text.contains("commit or stash"), "{text}");
    assert_eq!(e.exit_code(), 2);
    // Outside a checkout there is no commit to certify.
    let roster = Roster::load_default().unwrap();
    let e = preflight("codex", &caller(&w, &[]), &w.home, &roster, "release", NOW).unwrap_err();
    assert!(matches!(e, PreflightError::NoCommit { .. }), "{e}");
}

#[test]
fn missing_credentials_and_council_keys_are_a_named_skip_and_nothing_runs() {
    let w = world();
    let e = run(&w, "codex", &[]).unwrap_err();
    assert_eq!(e.exit_code(), EXIT_SKIPPED);
    let PreflightError::Skip { reasons } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        reasons[0],
        "codex: not logged in: ~/.codex/auth.json absent and OPENAI_API_KEY, CODEX_API_KEY unset; run `codex login` (or set OPENAI_API_KEY)"
    );
    assert!(
        reasons.iter().any(
            |r| r.starts_with("council `release` seat `gemini-flash`: GEMINI_API_KEY is unset")
        ),
        "{reasons:?}"
    );
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(
        !w.bin.join("codex.ran").exists(),
        "the preflight ran the harness"
    );
}

#[test]
fn with_every_key_it_is_ready_on_the_commit_and_prints_no_value() {
    let w = world();
    let ready = run(&w, "codex", &COUNCIL_KEYS).unwrap();
    assert_eq!(ready.harness, HarnessName::Codex);
    assert_eq!(ready.commit.len(), 40, "{ready:?}");
    assert_eq!(ready.found, ["$OPENAI_API_KEY"]);
    assert!(!format!("{ready:?}").contains(SECRET));
    assert!(!w.bin.join("codex.ran").exists());
}

/// Many dirty paths are shown up to a cap and counted; a path holding a newline or
/// an escape sequence is quoted, never printed raw (no terminal injection).
#[test]
fn dirty_paths_are_capped_and_quoted() {
    let w = world();
    for i in 0..25 {
        std::fs::write(w.repo.join(format!("f{i:02}.txt")), "x").unwrap();
    }
    std::fs::write(w.repo.join("evil\n\u{1b}[2Jname"), "x").unwrap();
    let e = run(&w, "codex", &COUNCIL_KEYS).unwrap_err();
    let PreflightError::DirtyTree { paths, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(paths.len(), 26, "{paths:?}");
    let text = e.to_string();
    assert!(text.contains(" and 6 more;"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\n'), "{text:?}");
}
