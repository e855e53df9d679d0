//! Test-only helpers: the stub provider binary (built on demand, since a
//! dev-dependency does not build another package's binaries) and a mentor that
//! cancels the conversation after a number of turns.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

use studyloop_actors::{CancelToken, Mentor, MentorError, MentorReply};
use studyloop_stubs::StubProvider;

const STUB: &str = "studyloop-stub-provider";

/// `target/<profile>/studyloop-stub-provider`, next to this test executable's
/// `deps/` directory; (re)built with cargo when missing or older than the stub
/// sources, so `cargo test -p studyloop-actors` works on a fresh checkout.
pub fn stub_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>/deps/<test>");
        let binary = profile_dir.join(STUB);
        if is_stale(&binary) {
            let release = profile_dir.file_name().is_some_and(|n| n == "release");
            let mut cargo = Command::new(env!("CARGO"));
            cargo.args(["build", "--workspace", "--bin", STUB]);
            if release {
                cargo.arg("--release");
            }
            let status = cargo
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("run cargo");
            assert!(
                status.success(),
                "building {STUB} failed; run `cargo build --bins`"
            );
        }
        binary
    })
}

fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                newest_mtime(&path)
            } else {
                entry.metadata().ok()?.modified().ok()
            }
        })
        .max()
}

fn is_stale(binary: &Path) -> bool {
    let Ok(built) = binary.metadata().and_then(|m| m.modified()) else {
        return true;
    };
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../common/stubs/src");
    newest_mtime(&sources).is_some_and(|newest| newest > built)
}

/// Starts the stub provider in `dir` with extra flags.
pub fn stub(dir: &Path, args: &[&str]) -> StubProvider {
    StubProvider::spawn(stub_binary(), dir, args.iter().copied()).expect("stub provider starts")
}

/// A mentor for tests that replies `REPLY <n>` and sets `cancel` once it has
/// answered `after` turns.
pub struct CancellingMentor {
    pub cancel: CancelToken,
    pub after: usize,
    pub turns: usize,
}

impl Mentor for CancellingMentor {
    fn send(&mut self, _learner_message: &str) -> Result<MentorReply, MentorError> {
        self.turns += 1;
        if self.turns >= self.after {
            self.cancel.cancel();
        }
        Ok(MentorReply::new(format!("REPLY {}", self.turns)))
    }
}
