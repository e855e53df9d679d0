//! Issue 34 item 4: `just report`, `just receipts` and `just shard` take every
//! parameter as data (positional arguments or environment variables), never spliced
//! into shell text: a hostile value `run$(touch CANARY)` reaches the program as
//! those very bytes and creates no canary. Before, each of the three ran the command.
//! `just shard-drill`'s KIND and `just drift`'s HARNESS and VERSION are held to the same rule.
//! `--no-deps` keeps the installs out of it (they take parameters of their own).
//! `just mutants MODULE` (issue 33 item 5) likewise, and refuses any MODULE outside
//! its closed set by name before anything is built.

use std::path::Path;
use std::process::{Command, Output};

use studyloop_acceptance::bins::{without_package_env, workspace_root};

fn just(root: &Path, args: &[&str]) -> Output {
    // The recipes run cargo: without this test's package variables, or it
    // rebuilds the workspace (`bins::without_package_env`).
    without_package_env(&mut Command::new("just"))
        .arg("--justfile")
        .arg(root.join("justfile"))
        .arg("--working-directory")
        .arg(root)
        .arg("--no-deps")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `just` ({e}): `.ci/ensure-just` installs it"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn recipe_parameters_are_data_never_shell_text() {
    let root = workspace_root();
    let tmp = tempfile::tempdir().unwrap();
    let canary = tmp.path().join("CANARY");
    let hostile = format!("run$(touch {})", canary.display());
    let backticks = format!("run`touch {}`", canary.display());
    let out_dir = tmp.path().join("out");
    let out_arg = out_dir.to_str().unwrap();
    for (recipe, args) in [
        (
            "shard",
            vec!["shard", hostile.as_str(), "hash:1/2", out_arg],
        ),
        (
            "shard",
            vec!["shard", backticks.as_str(), "hash:1/2", out_arg],
        ),
        ("report", vec!["report", hostile.as_str(), "--out", out_arg]),
        (
            "report",
            vec!["report", backticks.as_str(), "--out", out_arg],
        ),
        (
            "receipts",
            vec!["receipts", hostile.as_str(), "--out", out_arg],
        ),
    ] {
        let out = just(&root, &args);
        let all = text(&out);
        assert!(!out.status.success(), "{recipe}: {all}");
        assert!(
            !canary.exists(),
            "{recipe} ran the command in {args:?}: {all}"
        );
    }
    // The shard's refusal quotes the value as given: it was data all along.
    let out = just(&root, &["shard", hostile.as_str(), "hash:1/2", out_arg]);
    assert!(
        text(&out).contains(&format!("TIER must be acceptance or uat, not `{hostile}`")),
        "{}",
        text(&out)
    );
    assert!(!canary.exists());
    // The drill's partition KIND (hash, count or time) is data too, and checked first.
    let out = just(&root, &["shard-drill", "2", "0", hostile.as_str()]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "KIND must be hash, count or time, not `{hostile}`"
        )),
        "{}",
        text(&out)
    );
    assert!(!canary.exists());
    // `just drift`'s HARNESS and VERSION too: each refused by name before any install.
    for (args, needle) in [
        (
            vec!["drift", hostile.as_str()],
            format!(
                "HARNESS must be one of codex, claude, pi, opencode, grok (kiro is not on npm), not `{hostile}`"
            ),
        ),
        (
            vec!["drift", "codex", hostile.as_str()],
            format!("VERSION must be a version like 0.170.0, not `{hostile}`"),
        ),
        (
            vec!["drift", "codex", "0.171.0"],
            "is the pinned version".to_owned(),
        ),
        (
            vec!["drift", "kiro"],
            "kiro-cli is not on the npm registry".to_owned(),
        ),
    ] {
        let out = just(&root, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(&needle), "{args:?}: {}", text(&out));
        assert!(!canary.exists());
    }
    assert!(
        !root
            .join(".harnesses-drift")
            .join(format!("codex@{hostile}"))
            .exists()
    );
    // No recipe of these splices a parameter: no `{{` in their bodies.
    let justfile = std::fs::read_to_string(root.join("justfile")).unwrap();
    for recipe in [
        "report",
        "receipts",
        "shard",
        "shard-drill",
        "archive",
        "drift",
        "mutants",
        "rerun-failed",
    ] {
        let start = justfile
            .lines()
            .position(|l| l.starts_with(&format!("{recipe} ")))
            .unwrap_or_else(|| panic!("no recipe {recipe}"));
        let body: Vec<&str> = justfile
            .lines()
            .skip(start + 1)
            .take_while(|l| l.starts_with("    ") || l.is_empty())
            .collect();
        assert!(
            !body.iter().any(|l| l.contains("{{")),
            "{recipe} splices a parameter into its shell text: {body:?}"
        );
    }
}

#[test]
fn mutants_takes_its_module_as_data_and_names_the_accepted_set() {
    let root = workspace_root();
    let tmp = tempfile::tempdir().unwrap();
    let canary = tmp.path().join("CANARY");
    let accepted =
        "the accepted set is redaction, cassette, signoff, bundle-verify, partition, fidelity";
    // Each hostile value stays outside the set even where a spliced substitution would
    // run and vanish (`nomodule$(...)` -> `nomodule`): a regressed recipe then fails
    // here at once instead of starting an hour of mutants.
    for module in [
        format!("nomodule$(touch {})", canary.display()),
        format!("nomodule`touch {}`", canary.display()),
        format!("redaction; touch {}", canary.display()),
        "redaction --in-place".to_owned(),
        "Redaction".to_owned(),
        String::new(),
    ] {
        let out = just(&root, &["mutants", module.as_str()]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{module:?}: {all}");
        assert!(
            all.contains(&format!("unknown MODULE `{module}`: {accepted}")),
            "{module:?}: {all}"
        );
        assert!(
            !canary.exists(),
            "mutants ran the command in {module:?}: {all}"
        );
    }
    // MODE likewise: only `again` or nothing.
    let mode = format!("nomode$(touch {})", canary.display());
    let out = just(&root, &["mutants", "redaction", mode.as_str()]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains(&format!(
            "unknown MODE `{mode}`: the accepted set is `again`"
        )),
        "{all}"
    );
    assert!(
        !canary.exists(),
        "mutants ran the command in {mode:?}: {all}"
    );
}
