//! Whether a harness launched now would be contained in a PID namespace of
//! its own or fall back to a subreaper (docs/security-hardening.md#one-containment-for-every-launch-path):
//! `studyloop contain -- /bin/true`, run once, read for the fallback's notice.

use std::path::Path;
use std::process::{Command, Stdio};

/// What a contained launch does on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Containment {
    /// A PID namespace of its own.
    Namespace,
    /// A subreaper; the kernel's reason.
    Subreaper(String),
    /// Could not be told (the notice, or why the probe failed).
    Unknown(String),
}

/// Probes through `exe` (this program).
pub(super) fn probe(exe: &Path) -> Containment {
    let out = Command::new(exe)
        .args([crate::modules::CONTAIN_COMMAND, "--", "/bin/true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => return Containment::Unknown(format!("cannot run {}: {e}", exe.display())),
    };
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    if let Some(reason) = stderr
        .split_once("no PID namespace for the harness (")
        .and_then(|(_, rest)| rest.split_once("); "))
        .map(|(reason, _)| reason.to_owned())
    {
        return Containment::Subreaper(reason);
    }
    if out.status.success() {
        Containment::Namespace
    } else {
        Containment::Unknown(format!(
            "`{} contain -- /bin/true` exited {:?}: {stderr}",
            exe.display(),
            out.status.code()
        ))
    }
}
