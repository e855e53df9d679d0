//! The phase's view of the filesystem and its privileges, built by the
//! namespace's init between `fork` and `exec` (module docs of `super`).

use std::io;
use std::os::fd::RawFd;

use super::contain::{DEVICES, MAX_FILE_BYTES, MAX_PROCESSES, PHASE_NICE, Sandbox};
use super::prepare;
use super::sys::{CapData, CapHeader, NOSUID, RDONLY, RECURSIVE, move_mount, open_tree, set_attr};

impl Sandbox {
    /// G's view of the filesystem (module docs).
    pub(super) unsafe fn build_view(&self, life: RawFd) -> io::Result<()> {
        // SAFETY: raw system calls on prepared, NUL-terminated data.
        unsafe {
            let null = std::ptr::null::<libc::c_char>();
            if libc::mount(
                null,
                c"/".as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(self.fail(3));
            }
            let mut kept: [RawFd; prepare::MAX_KEPT] = [-1; prepare::MAX_KEPT];
            let mut devs: [RawFd; DEVICES.len()] = [-1; DEVICES.len()];
            for (i, k) in self.keep.iter().take(kept.len()).enumerate() {
                kept[i] = open_tree(k.path.as_ptr());
                if kept[i] < 0 {
                    return Err(self.fail(4));
                }
                if !k.writable
                    && set_attr(
                        kept[i],
                        c"".as_ptr(),
                        RECURSIVE | libc::AT_EMPTY_PATH as u32,
                        RDONLY,
                    ) != 0
                {
                    return Err(self.fail(4));
                }
            }
            for (i, d) in DEVICES.iter().enumerate() {
                devs[i] = open_tree(d.as_ptr());
            }
            // Root's phase becomes 65534 now: every path below it reaches
            // through what 65534 may pass (or a tmpfs), and what it creates
            // in the tmpfs must be owned by an id mapped in the namespace.
            // The namespace's capabilities stay (its uid 0 is not mapped, so
            // the kernel's setuid fix-up does not apply) until dropped.
            if self.ids.from_root
                && (libc::syscall(
                    libc::SYS_setresgid,
                    self.ids.gid,
                    self.ids.gid,
                    self.ids.gid,
                ) != 0
                    || libc::syscall(
                        libc::SYS_setresuid,
                        self.ids.uid,
                        self.ids.uid,
                        self.ids.uid,
                    ) != 0)
            {
                return Err(self.fail(12));
            }
            // A change of ids clears the parent-death signal: arm it again,
            // then make sure C did not die in between.
            if self.ids.from_root {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // Not left to `suid_dumpable`: never dumpable (`enter`).
                if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
                    return Err(self.fail(12));
                }
                let mut p = libc::pollfd {
                    fd: life,
                    events: 0,
                    revents: 0,
                };
                if libc::poll(&mut p, 1, 0) != 0 {
                    libc::_exit(125);
                }
            }
            if set_attr(libc::AT_FDCWD, c"/".as_ptr(), RECURSIVE, RDONLY | NOSUID) != 0 {
                return Err(self.fail(5));
            }
            let ro = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                ro,
                std::ptr::null(),
            ) != 0
            {
                return Err(self.fail(6));
            }
            let tmpfs = c"tmpfs".as_ptr();
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            // O_PATH handles on each tmpfs, to make it (and not what is
            // bound on top of it later) read-only at the end.
            let mut tops: [RawFd; prepare::MAX_HIDDEN + 1] = [-1; prepare::MAX_HIDDEN + 1];
            for (i, top) in tops.iter_mut().enumerate().take(self.hide.len() + 1) {
                let (at, step) = match self.hide.get(i) {
                    Some(h) => (h.as_c_str(), 7),
                    None => (c"/dev", 8),
                };
                if libc::mount(
                    tmpfs,
                    at.as_ptr(),
                    tmpfs,
                    flags,
                    self.tmpfs_options.as_ptr().cast(),
                ) != 0
                {
                    return Err(self.fail(step));
                }
                *top = libc::open(
                    at.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                );
                if *top < 0 {
                    return Err(self.fail(step));
                }
            }
            for (i, d) in DEVICES.iter().enumerate() {
                if devs[i] < 0 {
                    continue;
                }
                let f = libc::open(
                    d.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o666,
                );
                if f < 0 || libc::close(f) != 0 || move_mount(devs[i], d.as_ptr()) != 0 {
                    return Err(self.fail(8));
                }
            }
            for (link, to) in [
                (c"/dev/fd", c"/proc/self/fd"),
                (c"/dev/stdin", c"/proc/self/fd/0"),
                (c"/dev/stdout", c"/proc/self/fd/1"),
                (c"/dev/stderr", c"/proc/self/fd/2"),
            ] {
                if libc::symlink(to.as_ptr(), link.as_ptr()) != 0 {
                    return Err(self.fail(8));
                }
            }
            for (i, k) in self.keep.iter().take(kept.len()).enumerate() {
                for p in &k.parents {
                    if libc::mkdir(p.as_ptr(), 0o755) != 0
                        && *libc::__errno_location() != libc::EEXIST
                    {
                        return Err(self.fail(9));
                    }
                }
                if move_mount(kept[i], k.path.as_ptr()) != 0 {
                    return Err(self.fail(9));
                }
                libc::close(kept[i]);
            }
            // The tmpfs themselves read-only too (not their bound-back mounts).
            for top in tops.into_iter().filter(|t| *t >= 0) {
                if set_attr(top, c"".as_ptr(), libc::AT_EMPTY_PATH as u32, RDONLY) != 0 {
                    return Err(self.fail(9));
                }
                libc::close(top);
            }
            Ok(())
        }
    }

    /// No capability (bounding and ambient sets included), `no_new_privs`,
    /// and the limits.
    pub(super) unsafe fn drop_privileges(&self) -> io::Result<()> {
        // SAFETY: raw system calls with valid pointers.
        unsafe {
            let limits = [
                (libc::RLIMIT_NPROC, MAX_PROCESSES),
                (libc::RLIMIT_FSIZE, MAX_FILE_BYTES),
                (libc::RLIMIT_CORE, 0),
                // No way back up from the lowest priority.
                (libc::RLIMIT_NICE, 0),
            ];
            for (what, n) in limits {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                if libc::setrlimit(what, &lim) != 0 {
                    return Err(self.fail(10));
                }
            }
            // The lowest CPU priority, inherited by everything the phase
            // starts: a busy phase (a capped fork bomb spins until its
            // timeout) yields to the learner's shell, editor and harness.
            if libc::setpriority(libc::PRIO_PROCESS, 0, PHASE_NICE) != 0 {
                return Err(self.fail(10));
            }
            for cap in 0..64 {
                libc::prctl(libc::PR_CAPBSET_DROP, cap);
            }
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            );
            let mut head = CapHeader {
                version: 0x2008_0522,
                pid: 0,
            };
            let data = [CapData::default(); 2];
            if libc::syscall(libc::SYS_capset, &mut head, data.as_ptr()) != 0
                || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            {
                return Err(self.fail(10));
            }
            Ok(())
        }
    }
}
