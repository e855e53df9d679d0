//! The raw system calls of the containment (`super`), each a thin wrapper
//! safe to call between `fork` and `exec`: no allocation, no locks, only
//! pointers to data prepared beforehand.

use std::ffi::CStr;
use std::os::fd::RawFd;

pub(super) const RDONLY: u64 = 0x1;
pub(super) const NOSUID: u64 = 0x2;
pub(super) const RECURSIVE: u32 = libc::AT_RECURSIVE as u32;

#[repr(C)]
pub(super) struct CapHeader {
    pub(super) version: u32,
    pub(super) pid: i32,
}
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(super) struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
#[repr(C)]
pub(super) struct MountAttr {
    set: u64,
    clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `mount_setattr`: `set` on the mount at `path` and every mount below it.
pub(super) unsafe fn set_attr(
    dirfd: RawFd,
    path: *const libc::c_char,
    flags: u32,
    set: u64,
) -> libc::c_long {
    let attr = MountAttr {
        set,
        clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: valid pointers; the size is the struct's.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path,
            flags,
            &attr,
            std::mem::size_of::<MountAttr>(),
        )
    }
}

pub(super) unsafe fn open_tree(path: *const libc::c_char) -> RawFd {
    let flags = 0x1 /* OPEN_TREE_CLONE */ | libc::O_CLOEXEC as u32 | libc::AT_RECURSIVE as u32;
    // SAFETY: a valid path.
    unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path, flags) as RawFd }
}

pub(super) unsafe fn move_mount(from: RawFd, to: *const libc::c_char) -> libc::c_long {
    // SAFETY: a valid fd and path.
    unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            from,
            c"".as_ptr(),
            libc::AT_FDCWD,
            to,
            0x4u32, /* F_EMPTY_PATH */
        )
    }
}

pub(super) unsafe fn write_file(path: &CStr, data: &[u8]) -> bool {
    // SAFETY: a valid path and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let ok = libc::write(fd, data.as_ptr().cast(), data.len()) == data.len() as isize;
        libc::close(fd);
        ok
    }
}

pub(super) fn write_all(fd: RawFd, data: &[u8]) {
    // SAFETY: a valid buffer; a short write of 10 bytes to a pipe does not happen.
    unsafe {
        libc::write(fd, data.as_ptr().cast(), data.len());
    }
}

pub(super) unsafe fn wait_for(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    // SAFETY: a valid pointer.
    unsafe {
        while libc::waitpid(pid, &mut status, 0) == -1 && *libc::__errno_location() == libc::EINTR {
        }
    }
    status
}

/// Processes in this PID namespace other than its init (its own /proc).
pub(super) unsafe fn count_others() -> u32 {
    // SAFETY: raw system calls into a stack buffer.
    unsafe {
        let fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return 0;
        }
        let mut buf = [0u8; 8192];
        let mut n_procs = 0u32;
        loop {
            let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off + 19 < n as usize {
                let reclen = usize::from(u16::from_ne_bytes([buf[off + 16], buf[off + 17]]));
                let name = &buf[off + 19..off + reclen];
                let name = &name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())];
                if !name.is_empty() && name.iter().all(u8::is_ascii_digit) && name != b"1" {
                    n_procs += 1;
                }
                if reclen == 0 {
                    break;
                }
                off += reclen;
            }
        }
        libc::close(fd);
        n_procs
    }
}

/// The helper of a root caller (a child of C that stays in the caller's
/// namespaces, where it may map any id): waits for C's byte on `go` (C has
/// unshared), then writes the maps through `me`
/// (C's `/proc/<pid>`, opened before the fork). Exits 0, or with the errno.
pub(super) unsafe fn map_from_outside(me: RawFd, go: RawFd, uid_map: &[u8], gid_map: &[u8]) -> ! {
    // SAFETY: raw system calls with valid pointers.
    unsafe {
        let mut byte = 0u8;
        if libc::read(go, (&raw mut byte).cast(), 1) != 1 {
            // C could not unshare (it says why) or died.
            libc::_exit(0);
        }
        // `setgroups` stays allowed: C drops its supplementary groups next
        // (the phase holds no CAP_SETGID to take any back).
        for (name, data) in [(c"gid_map", gid_map), (c"uid_map", uid_map)] {
            let fd = libc::openat(me, name.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 || libc::write(fd, data.as_ptr().cast(), data.len()) != data.len() as isize {
                libc::_exit((*libc::__errno_location()).clamp(1, 255));
            }
            libc::close(fd);
        }
        libc::_exit(0)
    }
}

/// `struct ifreq` with its flags member (the rest is padding).
#[repr(C)]
struct IfFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    pad: [u8; 22],
}

/// Brings up `lo` in the (new) network namespace: a drill without network
/// still has its own loopback.
pub(super) unsafe fn loopback_up() -> bool {
    // SAFETY: raw system calls with a valid, fully initialised `ifreq`.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return false;
        }
        let mut req = IfFlags {
            name: [0; libc::IFNAMSIZ],
            flags: 0,
            pad: [0; 22],
        };
        req.name[..2].copy_from_slice(b"lo");
        let ok = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req) == 0 && {
            req.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(s, libc::SIOCSIFFLAGS, &req) == 0
        };
        libc::close(s);
        ok
    }
}

/// The address range of this process's environment block (fields 50 and 51
/// of `/proc/self/stat`), read before `fork`.
pub(super) fn env_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut f = rest.split_whitespace().skip(50 - 3);
    let start = f.next()?.parse::<usize>().ok()?;
    let end = f.next()?.parse::<usize>().ok()?;
    (start > 0 && end > start).then_some((start, end))
}

/// Zeroes `start..end` of this process's memory (its environment block, a
/// forked copy: the caller's own is untouched).
pub(super) unsafe fn wipe(start: usize, end: usize) {
    // SAFETY: the range is the environment block the kernel mapped at exec
    // (writable stack); after fork it is this process's private copy.
    unsafe {
        let p = start as *mut u8;
        for i in 0..end - start {
            std::ptr::write_volatile(p.add(i), 0);
        }
    }
}
