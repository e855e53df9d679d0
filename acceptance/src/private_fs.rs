//! Creating private (owner-only) directories whatever the umask, and (re-exported
//! from the `studyloop-regular-file` leaf) the one way the framework opens a file it
//! reads as evidence or records.
//!
//! Every reader of a run directory, a bundle or an arbitration goes through
//! [`open_regular`] / [`read_regular`]: see that crate for why (FIFOs, final
//! symlinks, devices and huge files are refused without blocking).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` and missing parents with mode 0700, then sets `dir` itself to
/// exactly 0700, tightening a directory that already existed.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

pub use studyloop_regular_file::{kind_word, open_regular, read_regular};

#[cfg(test)]
pub(crate) mod tests {
    /// Makes a FIFO (0600) at `path`: the file a hostile tree plants to hang a reader.
    pub(crate) use studyloop_regular_file::make_fifo_for_tests as fifo;
}
