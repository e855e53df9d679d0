//! Codex's `config.toml`: replace or append the `[mcp_servers.studyloop]`
//! table (and its `.env` subtable) as text, so everything else in the user's
//! file (comments, order, other servers) stays byte for byte. The workspace
//! has no TOML parser and needs none for one table we own by name.

use super::McpServerSpec;
use crate::adapters::toml_string;

/// A table header's dotted name, unquoted and without spaces
/// (`[mcp_servers."studyloop" . env]` → `mcp_servers.studyloop.env`).
fn header_name(line: &str) -> Option<String> {
    let t = line.trim();
    let inner = t
        .strip_prefix("[[")
        .and_then(|r| r.split("]]").next())
        .or_else(|| t.strip_prefix('[').and_then(|r| r.split(']').next()))?;
    Some(
        inner
            .chars()
            .filter(|c| !matches!(c, '"' | '\'' | ' ' | '\t'))
            .collect(),
    )
}

fn ours(name: &str) -> bool {
    name == "mcp_servers.studyloop" || name.starts_with("mcp_servers.studyloop.")
}

/// The table codex reads for `spec`.
pub(super) fn block(spec: &McpServerSpec) -> String {
    let mut out = format!(
        "[mcp_servers.{name}]\ncommand = {cmd}\nargs = [{args}]\n\n[mcp_servers.{name}.env]\n",
        name = spec.name,
        cmd = toml_string(&spec.command.to_string_lossy()),
        args = spec
            .args
            .iter()
            .map(|a| toml_string(a))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for (k, v) in &spec.env {
        out.push_str(k);
        out.push_str(" = ");
        out.push_str(&toml_string(v));
        out.push('\n');
    }
    out
}

/// `text` with our table in place of any earlier `studyloop` entry (at the
/// same position), or appended; plus the command the earlier entry ran.
pub(super) fn upsert(text: &str, spec: &McpServerSpec) -> (String, Option<String>) {
    let mut kept: Vec<&str> = Vec::new();
    let mut at: Option<usize> = None;
    let mut previous = None;
    let mut in_ours = false;
    let mut table = String::new();
    for line in text.lines() {
        if let Some(name) = header_name(line) {
            in_ours = ours(&name);
            table = name;
            if in_ours {
                at.get_or_insert(kept.len());
                continue;
            }
        }
        if in_ours {
            if table == "mcp_servers.studyloop"
                && let Some(v) = line.trim().strip_prefix("command")
                && let Some(v) = v.trim_start().strip_prefix('=')
            {
                previous = Some(v.trim().trim_matches('"').to_owned());
            }
            continue;
        }
        // `studyloop = {…}` on one line inside `[mcp_servers]`.
        if table == "mcp_servers"
            && line
                .trim_start()
                .strip_prefix("studyloop")
                .is_some_and(|r| r.trim_start().starts_with('='))
        {
            // Appended at the end, never spliced here: keys after this line
            // belong to `[mcp_servers]`, not to a table inserted above them.
            previous = Some(line.trim().to_owned());
            continue;
        }
        kept.push(line);
    }
    let ours = block(spec);
    let out = match at {
        Some(i) => {
            let (head, tail) = kept.split_at(i.min(kept.len()));
            let mut s = head.join("\n");
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(&ours);
            if !tail.is_empty() {
                s.push('\n');
                s.push_str(tail.join("\n").trim_start_matches('\n'));
                s.push('\n');
            }
            s
        }
        None => {
            let head = kept.join("\n");
            let head = head.trim_end();
            if head.is_empty() {
                ours
            } else {
                format!("{head}\n\n{ours}")
            }
        }
    };
    (out, previous)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn spec(cmd: &str) -> McpServerSpec {
        McpServerSpec {
            name: "studyloop",
            command: PathBuf::from(cmd),
            args: Vec::new(),
            env: vec![
                ("HOME".into(), "/h \"q\"".into()),
                ("SESSION_CONTEXT_SCOPE".into(), "work".into()),
            ],
        }
    }

    #[test]
    fn appends_once_keeps_the_users_file_and_is_idempotent() {
        let user = "# mine\nmodel = \"gpt\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let (once, prev) = upsert(user, &spec("/bin/studyloop-mcp"));
        assert_eq!(prev, None);
        assert_eq!(
            once,
            "# mine\nmodel = \"gpt\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n\
             [mcp_servers.studyloop]\ncommand = \"/bin/studyloop-mcp\"\nargs = []\n\n\
             [mcp_servers.studyloop.env]\nHOME = \"/h \\\"q\\\"\"\nSESSION_CONTEXT_SCOPE = \"work\"\n"
        );
        let (twice, prev) = upsert(&once, &spec("/bin/studyloop-mcp"));
        assert_eq!(twice, once);
        assert_eq!(prev.as_deref(), Some("/bin/studyloop-mcp"));
        assert_eq!(upsert("", &spec("/x")).0, block(&spec("/x")));
    }

    #[test]
    fn an_entry_pointing_elsewhere_is_replaced_in_place_and_reported() {
        let user = "[mcp_servers.\"studyloop\"]\ncommand = \"/old/python-mcp\"\nargs = [\"-m\"]\n\
                    [mcp_servers.studyloop.env]\nA = \"1\"\n\n[features]\nx = true\n";
        let (out, prev) = upsert(user, &spec("/new/studyloop-mcp"));
        assert_eq!(prev.as_deref(), Some("/old/python-mcp"));
        assert!(out.starts_with("[mcp_servers.studyloop]\ncommand = \"/new/studyloop-mcp\""));
        assert!(out.ends_with("\n\n[features]\nx = true\n"), "{out}");
        assert!(
            !out.contains("python-mcp") && !out.contains("A = \"1\""),
            "{out}"
        );
        assert_eq!(upsert(&out, &spec("/new/studyloop-mcp")).0, out);
        let inline =
            "[mcp_servers]\nstudyloop = { command = \"/old\" }\nkeep = { command = \"k\" }\n";
        let (out, prev) = upsert(inline, &spec("/n"));
        assert!(prev.is_some_and(|p| p.contains("/old")));
        assert!(
            out.contains("keep = { command = \"k\" }") && !out.contains("/old"),
            "{out}"
        );
    }
}
