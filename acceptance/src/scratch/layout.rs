//! Where everything lives under a scratch root, in one place: the world
//! builds it, the reaper rebuilds a dead world's paths from its root alone.

use std::path::{Path, PathBuf};

use crate::scratch::env::Pointers;

/// Where everything lives under a root: one definition for the world and
/// the reaper, which rebuilds a dead world's paths from its root alone.
pub(crate) struct Layout {
    pub(crate) home: PathBuf,
    pub(crate) config_dir: PathBuf,
    pub(crate) state_dir: PathBuf,
    pub(crate) tmp_dir: PathBuf,
    pub(crate) socket_dir: PathBuf,
}

impl Layout {
    pub(crate) fn of(root: &Path) -> Self {
        let home = root.join("home");
        Self {
            config_dir: home.join(".config/studyloop"),
            state_dir: home.join(".local/share/studyloop"),
            tmp_dir: root.join("tmp"),
            socket_dir: root.join("t"),
            home,
        }
    }

    pub(crate) fn pointers(&self) -> Pointers<'_> {
        Pointers {
            home: &self.home,
            config_dir: &self.config_dir,
            state_dir: &self.state_dir,
            tmp_dir: &self.tmp_dir,
            socket_dir: &self.socket_dir,
        }
    }
}
