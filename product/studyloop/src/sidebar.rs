//! `studyloop sidebar`: the narrow right-hand tmux pane. Redraws every two
//! seconds from the state file and the feeds (topic, energy, elapsed time,
//! recent topics, parked count). It owns nothing; tmux kills it with the
//! session.

use std::fmt::Write as _;

use std::io::Write as _;

use crate::settings::SessionPaths;
use crate::status::{self, Status};

/// One frame of the sidebar, without control characters (the only escapes
/// on the pane are the sidebar's own home-and-clear).
pub fn frame(st: &Status) -> String {
    crate::term::text(&frame_raw(st)).into_owned()
}

fn frame_raw(st: &Status) -> String {
    let mut out = String::from("StudyLoop\n─────────\n");
    let Some(s) = st.state.as_ref().filter(|_| st.active) else {
        out.push_str("No active session.\n");
        return out;
    };
    let _ = writeln!(out, "{}\n", s.topic.as_deref().unwrap_or("?"));
    let _ = writeln!(
        out,
        "Energy  {}/10 {}",
        s.energy.map_or("?".into(), |e| e.to_string()),
        s.energy_label.as_deref().unwrap_or("")
    );
    let _ = writeln!(out, "Mode    {}", s.mode.as_deref().unwrap_or("?"));
    let _ = writeln!(out, "Agent   {}", s.agent.as_deref().unwrap_or("?"));
    let _ = writeln!(
        out,
        "Time    {}\n",
        st.elapsed_seconds
            .map_or("?".into(), status::human_duration)
    );
    out.push_str("Recent topics\n");
    if st.recent.is_empty() {
        out.push_str("  (none yet)\n");
    }
    for t in &st.recent {
        let mark = match t.status {
            crate::feeds::TopicStatus::Win | crate::feeds::TopicStatus::Insight => "✓",
            crate::feeds::TopicStatus::Struggling => "!",
            crate::feeds::TopicStatus::Parked => "…",
            crate::feeds::TopicStatus::Learning => "·",
        };
        let _ = writeln!(out, "  {mark} {}", t.name);
    }
    let _ = writeln!(out, "\nParked  {}", st.parked);
    out
}

/// Draw frames until killed; with `once`, draw one and return.
pub fn run(paths: &SessionPaths, once: bool) -> Result<(), status::StatusError> {
    loop {
        let text = match status::read(paths) {
            Ok(st) => frame(&st),
            Err(e) => crate::term::text(&format!("StudyLoop\n\n{e}\n")).into_owned(),
        };
        let mut out = std::io::stdout().lock();
        if once {
            let _ = out.write_all(text.as_bytes());
            return Ok(());
        }
        // Home + clear, then the frame; a closed terminal just ends the loop.
        if out
            .write_all(format!("\x1b[H\x1b[2J{text}").as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return Ok(());
        }
        drop(out);
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
}
