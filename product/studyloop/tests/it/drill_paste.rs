//! The tmux delivery of a `practice_check` block, byte for byte: the agent's
//! pane runs a raw-mode recorder in place of the harness, so the test sees
//! exactly what an agent's input box receives — one bracketed paste whose
//! newlines are LF (tmux's default CR reached grok's model verbatim, measured
//! by `drill::grok`), then Enter.

use crate::common::{self, World};

#[test]
fn the_block_arrives_as_one_bracketed_paste_with_lf_newlines_then_enter() {
    let w = World::new();
    let typed = w.home.path().join("typed");
    let recorder = w.fake_bin(
        "raw-recorder",
        // Bracketed paste on, as an agent's input box asks for it.
        &format!(
            "stty raw -echo\nprintf '\\033[?2004h'\nexec cat > '{}'",
            typed.display()
        ),
    );
    let w = w.with_env(
        "STUDYLOOP_TEST_AGENT_CMD",
        &format!("'{}'", recorder.display()),
    );
    assert_eq!(w.run(&["module", "new", "my-drills"]).code, 0);
    assert_eq!(w.run(&["module", "add", "my-drills"]).code, 0);
    w.run(&["study", "drills", "--agent", "codex"]).ok();
    common::wait_until(10, "the recorder in the agent pane", || {
        w.main_pane_has_child()
    });
    let told = crate::commands::drill_on_a_tty(&w, "check", "yes\n");
    assert!(told.stdout.contains("Mentor told.\n"), "{}", told.stdout);
    common::wait_until(15, "the paste and its Enter", || {
        std::fs::read(&typed).is_ok_and(|b| b.ends_with(b"\x1b[201~\r"))
    });
    let bytes = std::fs::read(&typed).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let inner = text
        .strip_prefix("\x1b[200~")
        .and_then(|t| t.strip_suffix("\x1b[201~\r"))
        .unwrap_or_else(|| panic!("not one bracketed paste then Enter: {text:?}"));
    assert!(!inner.contains('\r'), "a CR inside the paste: {inner:?}");
    assert!(
        inner.starts_with("[practice_check] data from a StudyLoop drill")
            && inner.contains("\noutput:\n| ready\n[/practice_check]"),
        "{inner:?}"
    );
    w.run(&["study", "--end"]).ok();
}
