//! Where plan documents live and how one is read: only a regular file
//! (no FIFO hang, no symlink followed), bounded in size, UTF-8.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::PlanError;
use super::doc::limits;
use crate::context::Ctx;

/// Where the documents live: `STUDYLOOP_PLANS_DIR`, else `<state_dir>/study-plans`.
///
/// # Errors
/// A relative `STUDYLOOP_PLANS_DIR`.
pub(crate) fn plans_dir(ctx: &Ctx, state_dir: &Path) -> Result<PathBuf, PlanError> {
    crate::settings::plans_dir(&ctx.env, state_dir).map_err(|e| PlanError::Invalid(e.to_string()))
}

/// Read `path` if it is a regular file (no FIFO hang, no symlink), bounded.
pub(crate) fn read_doc(path: &Path) -> Result<Option<String>, PlanError> {
    use rustix::fs::{Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => return Err(PlanError::io("open", path, &e.into())),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| PlanError::io("stat", path, &e.into()))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(PlanError::Malformed {
            path: path.to_owned(),
            line: 1,
            message: "not a regular file".into(),
        });
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(limits::DOC_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| PlanError::io("read", path, &e))?;
    if bytes.len() > limits::DOC_BYTES {
        return Err(PlanError::Malformed {
            path: path.to_owned(),
            line: 1,
            message: format!("larger than {} bytes", limits::DOC_BYTES),
        });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| PlanError::Malformed {
            path: path.to_owned(),
            line: 1,
            message: "not UTF-8 text".into(),
        })
}
