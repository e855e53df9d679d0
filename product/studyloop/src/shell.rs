//! POSIX shell quoting for the one place we build a shell script: the wrapped
//! tmux pane command. Everything is single-quoted; nothing is interpolated
//! except where a caller deliberately emits `$(...)` or `$PATH`.

/// Quote `s` for `/bin/sh` (single quotes; embedded `'` as `'\''`).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Whether `name` is a valid shell variable name (safe to `export`/`unset`).
pub fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_the_shell() {
        for s in [
            "plain",
            "with space",
            "it's",
            "$(rm -rf /)",
            "a\"b",
            "",
            "back\\slash",
            "new\nline",
        ] {
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(format!("printf %s {}", quote(s)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s);
        }
    }

    #[test]
    fn var_names() {
        assert!(is_var_name("STUDYLOOP_DB") && is_var_name("_x1"));
        assert!(!is_var_name("1X") && !is_var_name("A-B") && !is_var_name(""));
    }
}
