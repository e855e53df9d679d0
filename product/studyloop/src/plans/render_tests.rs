//! Plan documents can be neither forged nor bricked, and hand edits survive
//! (issue 25, items 11 and 12), over real files: a `\n` in a posted title
//! forges no milestone, notes starting with `## ` stay readable, the size
//! bounds hold for posted documents, a plan that would not read back is
//! refused with nothing written, and what a hand edit adds is kept.

use serde_json::json;

use super::doc::{Milestone, Plan};
use super::*;

fn app() -> (tempfile::TempDir, PlanApp) {
    let dir = tempfile::tempdir().unwrap();
    let app = PlanApp::new(dir.path().join("plans"), dir.path().join("db/sessions.db"));
    (dir, app)
}

const TWO: &str = "---\nid: two\ntitle: TITLE\nstatus: draft\n---\n\n# T\n\n## Mission\n\nWhy: w\nSuccess criteria:\n- s\n\n## Milestones\n\n- [ ] **One**\n- [ ] **Two**\n\n## Notes\n\n";

#[test]
fn a_newline_in_a_posted_title_forges_no_milestone() {
    let (_d, app) = app();
    let title = json!("x\n\n## Milestones\n\n- [x] **Forged**\n\n## Notes\n").to_string();
    let p = app
        .create_from_markdown(&TWO.replace("TITLE", &title), None)
        .unwrap();
    assert_eq!(p.milestones.len(), 2);
    let back = app.get("two").unwrap();
    assert_eq!(back.milestones.len(), 2, "{}", back.render());
    assert_eq!(back.milestone_done(), 0);
    assert!(back.render().contains("\n# x  ## Milestones"));
}

#[test]
fn notes_starting_with_a_heading_leave_the_plan_readable() {
    let (_d, app) = app();
    app.create_from_markdown(&TWO.replace("TITLE", "T"), None)
        .unwrap();
    app.update(
        "two",
        IfRevision::Unchecked,
        &PlanPatch(json!({"notes": "## Not a section"})),
    )
    .unwrap();
    let p = app.get("two").unwrap();
    assert_eq!(p.notes, "## Not a section");
    app.set_milestone("two", IfRevision::Unchecked, 1, true)
        .unwrap();
    assert_eq!(app.get("two").unwrap().notes, "## Not a section");
}

#[test]
fn posted_documents_are_held_to_the_size_bounds() {
    let (_d, app) = app();
    let many: String = (0..40_000).map(|i| format!("- [ ] **m{i}**\n")).collect();
    let doc = TWO.replace("- [ ] **One**\n", &many).replace("TITLE", "T");
    let err = app
        .create_from_markdown(&doc, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("40001 milestones") && err.contains("at most 100"),
        "{err}"
    );
    assert!(app.get("two").is_err(), "written anyway");
    let hundred: String = (0..99).map(|i| format!("- [ ] **m{i}**\n")).collect();
    let doc = TWO
        .replace("- [ ] **One**\n", &hundred)
        .replace("TITLE", "T");
    assert_eq!(
        app.create_from_markdown(&doc, None)
            .unwrap()
            .milestones
            .len(),
        100
    );
}

#[test]
fn a_plan_that_would_not_read_back_is_refused_and_nothing_written() {
    let (_d, app) = app();
    let mut p = app
        .create_from_markdown(&TWO.replace("TITLE", "T"), None)
        .unwrap();
    let before = std::fs::read_to_string(app.doc_path(&p.id)).unwrap();
    for bad in [
        Milestone {
            title: "a** b".into(),
            done: false,
            concepts: vec![],
        },
        Milestone {
            title: "c".into(),
            done: false,
            concepts: vec!["x, y".into()],
        },
    ] {
        p.milestones.push(bad);
        let err = super::render::to_document(&p).unwrap_err().to_string();
        assert!(
            err.contains("would not read back") && err.contains("nothing was written"),
            "{err}"
        );
        p.milestones.pop();
    }
    assert_eq!(
        std::fs::read_to_string(app.doc_path(&p.id)).unwrap(),
        before
    );
}

#[test]
fn hand_edits_survive_the_next_write() {
    let (_d, app) = app();
    app.create_from_markdown(&TWO.replace("TITLE", "T"), None)
        .unwrap();
    let path = app.doc_path(&PlanId::parse("two").unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text
        .replace("topics: []\n", "topics: []\n# my comment\nowner: \"me\"\n")
        .replace(
            "## Notes\n\n",
            "## Notes\n\nfirst line\n\n  indented second\n\n## My links\n\n- https://example.org\nfree text\n",
        );
    std::fs::write(&path, &edited).unwrap();
    app.set_milestone("two", IfRevision::Unchecked, 0, true)
        .unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "# my comment\n",
        "owner: \"me\"\n",
        "first line\n\n  indented second\n",
        "## My links\n\n- https://example.org\nfree text\n",
        "- [x] **One**",
    ] {
        assert!(after.contains(kept), "{kept:?} lost:\n{after}");
    }
    let p: Plan = app.get("two").unwrap();
    assert_eq!(p.notes, "first line\n\n  indented second");
}

#[test]
fn comments_and_headings_inside_owned_sections_stay_in_place() {
    let (_d, app) = app();
    app.create_from_markdown(&TWO.replace("TITLE", "T"), None)
        .unwrap();
    let path = app.doc_path(&PlanId::parse("two").unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text
        .replace("Why: w\n", "<!-- the why, in one line -->\nWhy: w\n")
        .replace(
            "- [ ] **One**\n- [ ] **Two**\n",
            "### Week 1\n- [ ] **One**\n<!--\n## Not a section\n\nstill the comment -->\n#### Week 2\n- [ ] **Two**\n<!-- end -->\n",
        );
    std::fs::write(&path, &edited).unwrap();
    let p = app.get("two").unwrap();
    assert_eq!(p.milestones.len(), 2, "{:?}", p.kept);
    app.set_milestone("two", IfRevision::Unchecked, 1, true)
        .unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "## Mission\n\n<!-- the why, in one line -->\nWhy: w\n",
        "### Week 1\n- [ ] **One**\n<!--\n## Not a section\n\nstill the comment -->\n#### Week 2\n- [x] **Two**\n<!-- end -->\n",
    ] {
        assert!(after.contains(kept), "{kept:?} lost:\n{after}");
    }
    assert!(
        !after.contains("## My") && app.get("two").unwrap().kept.sections.is_empty(),
        "the `## ` inside the comment opened a section:\n{after}"
    );
    // A write with fewer milestones keeps the lines anchored past the end.
    app.update(
        "two",
        IfRevision::Unchecked,
        &PlanPatch(json!({"milestones": [{"title": "Only"}]})),
    )
    .unwrap();
    let fewer = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "### Week 1\n- [ ] **Only**\n<!--\n",
        "#### Week 2\n<!-- end -->\n",
    ] {
        assert!(fewer.contains(kept), "{kept:?} lost:\n{fewer}");
    }
}

#[test]
fn an_unclosed_comment_in_an_owned_section_is_refused_naming_its_line() {
    let (_d, app) = app();
    let doc = TWO
        .replace("TITLE", "T")
        .replace("- [ ] **Two**\n", "<!-- hides the rest\n- [ ] **Two**\n");
    let err = app
        .create_from_markdown(&doc, None)
        .unwrap_err()
        .to_string();
    let line = doc.lines().position(|l| l.starts_with("<!--")).unwrap() + 1;
    assert!(
        err.contains(&format!(":{line}")) && err.contains("not closed with `-->`"),
        "{err}"
    );
}
