//! The walk's ordering of the ownership marks.

use super::*;

fn frame(name: &str, pending: &[&str]) -> Frame {
    let node = node_of(rustix::fs::CWD).unwrap();
    Frame {
        name: CString::new(name).unwrap(),
        node,
        fd: None,
        pending: pending.iter().map(|n| CString::new(*n).unwrap()).collect(),
    }
}

fn popped(frame: &Frame) -> Vec<String> {
    let names = frame.pending.iter().rev();
    names.map(|n| n.to_string_lossy().into_owned()).collect()
}

#[test]
fn the_ownership_marks_are_removed_last_at_every_level() {
    let walk = Walk {
        root_path: Path::new("/tmp/sl-acc-x"),
        root: node_of(rustix::fs::CWD).unwrap(),
        euid: 0,
        keep_last: &[Path::new("home/.sentinel"), Path::new("owner")],
    };
    let mut stack = vec![frame("", &["owner", "home", "a", "t", "z"])];
    walk.keep_last_last(&mut stack);
    assert_eq!(popped(&stack[0]), ["z", "t", "a", "home", "owner"]);
    stack.push(frame("home", &[".sentinel", ".cache", "x"]));
    walk.keep_last_last(&mut stack);
    assert_eq!(popped(&stack[1]), ["x", ".cache", ".sentinel"]);
    // Off the marks' paths nothing moves.
    stack.pop();
    stack.push(frame("a", &["b", ".sentinel"]));
    walk.keep_last_last(&mut stack);
    assert_eq!(popped(&stack[1]), [".sentinel", "b"]);
}
