//! Mount points inside a scratch tree, from `/proc/self/mountinfo`.
//!
//! Checked before anything is deleted: a bind mount inside a scratch HOME
//! shares the root's `st_dev` when both live on the same filesystem, so the
//! device alone cannot tell it apart; the walk also compares mount ids
//! (`statx`), this list lets the sweep refuse with the tree still whole.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// Every mount point at or under `root` (compared component-wise, both as
/// given and symlink-resolved). Empty when `/proc` is not mounted: then the
/// walk's per-entry mount-id and device checks are the only guard.
pub(super) fn mount_points_under(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let resolved = super::guard::resolve(root);
    let mut found: Vec<PathBuf> = text
        .split(|&b| b == b'\n')
        .filter_map(|line| line.split(|&b| b == b' ').nth(4))
        .map(unescape)
        .filter(|point| point.starts_with(root) || point.starts_with(&resolved))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Undoes mountinfo's octal escapes (`\040` space, `\011` tab, `\012`
/// newline, `\134` backslash); anything else is kept as it stands.
fn unescape(field: &[u8]) -> PathBuf {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_spaces_tabs_newlines_and_backslashes() {
        assert_eq!(
            unescape(br"/tmp/sl-acc-x/home/a\040b\011c\012d\134e"),
            PathBuf::from("/tmp/sl-acc-x/home/a b\tc\nd\\e")
        );
        assert_eq!(unescape(br"/plain\09"), PathBuf::from(r"/plain\09"));
    }

    #[test]
    fn the_root_filesystem_is_not_under_a_scratch_root() {
        assert!(mount_points_under(Path::new("/tmp/sl-acc-no-such-root")).is_empty());
        // "/" is mounted on every Linux machine, and every path is under it.
        assert!(mount_points_under(Path::new("/")).contains(&PathBuf::from("/")));
    }
}
