//! Codex's `config.toml`: replace or add the `[mcp_servers.studyloop]` table
//! (and its `.env` subtable) through a format-preserving TOML document
//! (`toml_edit`), so everything else in the user's file (comments, order,
//! other servers, a multi-line string that happens to hold a table header)
//! stays as it was. A file that is not valid TOML is refused, never edited:
//! codex would refuse it too, and any edit by line would guess.

use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::McpServerSpec;

/// Our table for `spec`.
fn table(spec: &McpServerSpec) -> Table {
    let mut t = Table::new();
    t.insert(
        "command",
        value(spec.command.to_string_lossy().into_owned()),
    );
    let args: Array = spec.args.iter().map(String::as_str).collect();
    t.insert("args", value(args));
    let mut env = Table::new();
    for (k, v) in &spec.env {
        env.insert(k, value(v.as_str()));
    }
    t.insert("env", Item::Table(env));
    t
}

/// The command an existing `studyloop` entry runs (a table or an inline one).
fn command_of(item: &Item) -> Option<String> {
    item.get("command")
        .and_then(Item::as_str)
        .map(str::to_owned)
        .or_else(|| Some(item.to_string().trim().to_owned()))
}

/// `text` with our table in place of any earlier `studyloop` entry (where
/// it was, when it was a table), or added; plus the command the earlier
/// entry ran. `Err` names why the file is refused (not TOML, or an
/// `mcp_servers` that is not a table).
pub(super) fn upsert(text: &str, spec: &McpServerSpec) -> Result<(String, Option<String>), String> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        e.to_string().lines().next().unwrap_or_default().to_owned()
    })?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or("`mcp_servers` is not a table")?;
    let previous = servers.get("studyloop").and_then(command_of);
    let ours = table(spec);
    match servers.get_mut("studyloop").and_then(Item::as_table_mut) {
        // In place: the table keeps its position and its header's comments.
        Some(old) => {
            old.clear();
            for (k, v) in ours.iter() {
                old.insert(k, v.clone());
            }
        }
        None => {
            servers.remove("studyloop");
            servers.insert("studyloop", Item::Table(ours));
        }
    }
    let mut out = doc.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok((out, previous))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn spec(cmd: &str) -> McpServerSpec {
        McpServerSpec {
            name: "studyloop",
            command: PathBuf::from(cmd),
            args: vec!["--stdio".into()],
            env: vec![
                ("HOME".into(), "/h \"q\"".into()),
                ("SESSION_CONTEXT_SCOPE".into(), "work".into()),
            ],
        }
    }

    fn parsed(text: &str) -> DocumentMut {
        text.parse().unwrap()
    }

    #[test]
    fn adds_once_keeps_the_users_file_and_is_idempotent() {
        let user = "# mine\nmodel = \"gpt\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n";
        let (once, prev) = upsert(user, &spec("/bin/studyloop-mcp")).unwrap();
        assert_eq!(prev, None);
        assert!(once.starts_with(user), "{once}");
        let doc = parsed(&once);
        let ours = &doc["mcp_servers"]["studyloop"];
        assert_eq!(ours["command"].as_str(), Some("/bin/studyloop-mcp"));
        assert_eq!(ours["env"]["HOME"].as_str(), Some("/h \"q\""));
        assert_eq!(ours["args"].as_array().map(Array::len), Some(1));
        let (twice, prev) = upsert(&once, &spec("/bin/studyloop-mcp")).unwrap();
        assert_eq!(twice, once);
        assert_eq!(prev.as_deref(), Some("/bin/studyloop-mcp"));
        let (fresh, _) = upsert("", &spec("/x")).unwrap();
        assert_eq!(
            parsed(&fresh)["mcp_servers"]["studyloop"]["command"].as_str(),
            Some("/x")
        );
    }

    #[test]
    fn an_entry_pointing_elsewhere_is_replaced_in_place_and_reported() {
        let user = "[mcp_servers.\"studyloop\"]\ncommand = \"/old/python-mcp\"\nargs = [\"-m\"]\n\
                    [mcp_servers.studyloop.env]\nA = \"1\"\n\n[features]\nx = true\n";
        let (out, prev) = upsert(user, &spec("/new/studyloop-mcp")).unwrap();
        assert_eq!(prev.as_deref(), Some("/old/python-mcp"));
        assert!(out.trim_end().ends_with("[features]\nx = true"), "{out}");
        assert!(
            !out.contains("python-mcp") && !out.contains("A = \"1\""),
            "{out}"
        );
        assert_eq!(upsert(&out, &spec("/new/studyloop-mcp")).unwrap().0, out);
        let inline =
            "[mcp_servers]\nstudyloop = { command = \"/old\" }\nkeep = { command = \"k\" }\n";
        let (out, prev) = upsert(inline, &spec("/n")).unwrap();
        assert_eq!(prev.as_deref(), Some("/old"));
        assert!(
            out.contains("keep = { command = \"k\" }") && !out.contains("/old"),
            "{out}"
        );
        assert_eq!(
            parsed(&out)["mcp_servers"]["studyloop"]["command"].as_str(),
            Some("/n")
        );
    }

    /// A table header inside a multi-line string is text, not a table: the
    /// string stays byte for byte and the file still parses.
    #[test]
    fn a_header_inside_a_multi_line_string_is_left_alone() {
        let notes = "notes = \"\"\"\n[mcp_servers.studyloop]\ncommand = \"not a table\"\n\"\"\"\n";
        let user = format!("[profiles.work]\n{notes}model = \"o3\"\n");
        let (out, prev) = upsert(&user, &spec("/bin/studyloop-mcp")).unwrap();
        assert_eq!(prev, None);
        assert!(out.starts_with(&user), "{out}");
        let doc = parsed(&out);
        assert_eq!(
            doc["profiles"]["work"]["notes"].as_str(),
            Some("[mcp_servers.studyloop]\ncommand = \"not a table\"\n")
        );
        assert_eq!(doc["profiles"]["work"]["model"].as_str(), Some("o3"));
        assert_eq!(
            doc["mcp_servers"]["studyloop"]["command"].as_str(),
            Some("/bin/studyloop-mcp")
        );
    }

    #[test]
    fn a_file_that_is_not_toml_is_refused_untouched() {
        for bad in [
            "model = \"unterminated\n",
            "[a]\nx = 1\n[a]\nx = 2\n",
            "mcp_servers = 3\n",
        ] {
            let err = upsert(bad, &spec("/x")).unwrap_err();
            assert!(!err.is_empty(), "{bad:?}");
        }
    }
}
