//! The content digest of a module: sha256 over a canonical listing of the tree
//! (each directory, and each file's executable bit, sha256 and path, in path
//! order, paths length-prefixed so no name can forge a line). It names the
//! snapshot directory and is recomputed on use to detect tampering.

use sha2::{Digest as _, Sha256};

use super::tree::{Kind, Tree};

/// Whether `s` has the shape of a digest (64 lowercase hex): the only names a
/// snapshot directory may have, so a lockfile edit cannot point outside.
pub(crate) fn is_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The digest of `tree`, or why it has none (an entry that is not a regular
/// file or directory, or a file that cannot be read).
pub(crate) fn of_tree(tree: &Tree) -> Result<String, String> {
    let mut listing = Sha256::new();
    for e in &tree.entries {
        let line = match e.kind {
            Kind::Dir => format!("d {}:{}\n", e.rel.len(), e.rel),
            Kind::File { exec, .. } => {
                let bytes = tree.read(&e.rel).map_err(|err| err.to_string())?;
                let sum = crate::ids::hex(&Sha256::digest(&bytes));
                let mode = if exec { 755 } else { 644 };
                format!("f {mode} {sum} {}:{}\n", e.rel.len(), e.rel)
            }
            Kind::Other(what) => return Err(format!("`{}` is {what}", e.rel)),
        };
        listing.update(line.as_bytes());
    }
    Ok(crate::ids::hex(&listing.finalize()))
}

/// The sha256 of one file's bytes, hex (the drill shows it before consent).
pub(crate) fn of_bytes(bytes: &[u8]) -> String {
    crate::ids::hex(&Sha256::digest(bytes))
}
