// SPDX-License-Identifier: GPL-2.0

//! The PROCMAP_QUERY ioctl of `/proc/<pid>/maps` (Linux 6.11+).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Layout of `struct procmap_query` from `include/uapi/linux/fs.h`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct RawQuery {
    pub size: u64,
    pub query_flags: u64,
    pub query_addr: u64,
    pub vma_start: u64,
    pub vma_end: u64,
    pub vma_flags: u64,
    pub vma_page_size: u64,
    pub vma_offset: u64,
    pub inode: u64,
    pub dev_major: u32,
    pub dev_minor: u32,
    pub vma_name_size: u32,
    pub build_id_size: u32,
    pub vma_name_addr: u64,
    pub build_id_addr: u64,
}

pub const VMA_READABLE: u64 = 0x01;
pub const VMA_WRITABLE: u64 = 0x02;
pub const VMA_EXECUTABLE: u64 = 0x04;
pub const VMA_SHARED: u64 = 0x08;
pub const COVERING_OR_NEXT_VMA: u64 = 0x10;
pub const FILE_BACKED_VMA: u64 = 0x20;

/// `_IOWR('f', 17, struct procmap_query)`.
pub const PROCMAP_QUERY: u64 = ioc_readwrite(b'f', 17, std::mem::size_of::<RawQuery>());

const fn ioc_readwrite(kind: u8, nr: u8, size: usize) -> u64 {
    const IOC_WRITE: u64 = 1;
    const IOC_READ: u64 = 2;
    ((IOC_READ | IOC_WRITE) << 30) | ((size as u64) << 16) | ((kind as u64) << 8) | nr as u64
}

/// Largest build ID the kernel reports (`BUILD_ID_SIZE_MAX`).
pub const BUILD_ID_SIZE_MAX: usize = 20;
const NAME_MAX: usize = 4096;

/// One VMA as the kernel described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub flags: u64,
    pub offset: u64,
    pub inode: u64,
    pub dev: (u32, u32),
    pub name: String,
    pub build_id: Vec<u8>,
}

impl Vma {
    /// Permissions in the style of `/proc/<pid>/maps`.
    pub fn perms(&self) -> String {
        let bit = |mask, c| if self.flags & mask != 0 { c } else { '-' };
        [
            bit(VMA_READABLE, 'r'),
            bit(VMA_WRITABLE, 'w'),
            bit(VMA_EXECUTABLE, 'x'),
            if self.flags & VMA_SHARED != 0 {
                's'
            } else {
                'p'
            },
        ]
        .iter()
        .collect()
    }
}

/// An open `/proc/<pid>/maps` to query.
pub struct Maps {
    file: File,
}

impl Maps {
    pub fn open(pid: u32) -> io::Result<Self> {
        Ok(Self {
            file: File::open(format!("/proc/{pid}/maps"))?,
        })
    }

    /// Queries the VMA at (or, with `COVERING_OR_NEXT_VMA`, after) `addr`.
    ///
    /// Returns `Ok(None)` when there is no such VMA (`ENOENT`).
    pub fn query(&self, addr: u64, flags: u64) -> io::Result<Option<Vma>> {
        let mut name = vec![0u8; NAME_MAX];
        let mut build_id = [0u8; BUILD_ID_SIZE_MAX];
        let mut q = RawQuery {
            size: std::mem::size_of::<RawQuery>() as u64,
            query_flags: flags,
            query_addr: addr,
            vma_name_size: name.len() as u32,
            vma_name_addr: name.as_mut_ptr() as u64,
            build_id_size: build_id.len() as u32,
            build_id_addr: build_id.as_mut_ptr() as u64,
            ..RawQuery::default()
        };
        // SAFETY: `q` is a properly sized `struct procmap_query` whose
        // buffer addresses and sizes describe `name` and `build_id`, which
        // stay alive and unaliased for the duration of the call.
        let ret = unsafe { libc::ioctl(self.file.as_raw_fd(), PROCMAP_QUERY as _, &mut q) };
        if ret < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::ENOENT) => Ok(None),
                _ => Err(err),
            };
        }
        let name_len = (q.vma_name_size as usize).saturating_sub(1).min(name.len());
        name.truncate(name_len);
        let id_len = (q.build_id_size as usize).min(BUILD_ID_SIZE_MAX);
        Ok(Some(Vma {
            start: q.vma_start,
            end: q.vma_end,
            flags: q.vma_flags,
            offset: q.vma_offset,
            inode: q.inode,
            dev: (q.dev_major, q.dev_minor),
            name: String::from_utf8_lossy(&name).into_owned(),
            build_id: build_id[..id_len].to_vec(),
        }))
    }

    /// Every VMA that matches `flags`, in address order.
    pub fn all(&self, flags: u64) -> io::Result<Vec<Vma>> {
        let mut out = Vec::new();
        let mut addr = 0;
        while let Some(vma) = self.query(addr, flags | COVERING_OR_NEXT_VMA)? {
            addr = vma.end;
            out.push(vma);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_number_matches_uapi() {
        // 0xc0686611 is PROCMAP_QUERY as the 6.12 uapi headers compute it.
        assert_eq!(std::mem::size_of::<RawQuery>(), 104);
        assert_eq!(PROCMAP_QUERY, 0xc068_6611);
    }

    #[test]
    fn perms_like_proc_maps() {
        let vma = Vma {
            start: 0,
            end: 0,
            flags: VMA_READABLE | VMA_EXECUTABLE,
            offset: 0,
            inode: 0,
            dev: (0, 0),
            name: String::new(),
            build_id: vec![],
        };
        assert_eq!(vma.perms(), "r-xp");
    }

    #[test]
    fn own_executable_mapping_has_a_build_id() -> io::Result<()> {
        let maps = Maps::open(std::process::id())?;
        let here = own_executable_mapping_has_a_build_id as *const () as u64;
        let vma = match maps.query(here, 0) {
            Ok(v) => v,
            // Kernels before 6.11 have no PROCMAP_QUERY.
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => return Ok(()),
            Err(e) => return Err(e),
        };
        let vma = vma.expect("code address must be mapped");
        assert!(vma.start <= here && here < vma.end);
        assert_eq!(vma.perms().as_bytes()[2], b'x');
        let exe = std::fs::read_link("/proc/self/exe")?;
        assert_eq!(vma.name, exe.to_string_lossy());
        Ok(())
    }
}
