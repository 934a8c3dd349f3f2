// SPDX-License-Identifier: GPL-2.0

//! The fallback for kernels without PROCMAP_QUERY (before 6.11, `ENOTTY`): the VMAs come
//! from the text of `/proc/<pid>/maps`, and build IDs from reading each mapped file in user
//! space, through `/proc/<pid>/map_files/` when allowed (the very file mapped, even if it
//! was replaced or deleted since) or else through its path.

use crate::elffile;
use crate::procmap::{Vma, VMA_EXECUTABLE, VMA_READABLE, VMA_SHARED, VMA_WRITABLE};
use std::fs;
use std::io;

/// One line of `/proc/<pid>/maps`.
pub fn parse_line(line: &str) -> Option<Vma> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let perms = fields.next()?.as_bytes();
    let offset = u64::from_str_radix(fields.next()?, 16).ok()?;
    let dev = fields.next()?;
    let inode = fields.next()?.parse().ok()?;
    let name = fields.next().unwrap_or("").trim_start().to_string();
    let (start, end) = range.split_once('-')?;
    let (major, minor) = dev.split_once(':')?;
    if perms.len() != 4 {
        return None;
    }
    let mut flags = 0;
    for (c, flag) in [
        (b'r', VMA_READABLE),
        (b'w', VMA_WRITABLE),
        (b'x', VMA_EXECUTABLE),
    ] {
        if perms.contains(&c) {
            flags |= flag;
        }
    }
    if perms[3] == b's' {
        flags |= VMA_SHARED;
    }
    Some(Vma {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        flags,
        offset,
        inode,
        dev: (
            u32::from_str_radix(major, 16).ok()?,
            u32::from_str_radix(minor, 16).ok()?,
        ),
        name,
        build_id: Vec::new(),
    })
}

/// The VMAs of `pid`, in address order, without build IDs.
pub fn read(pid: u32) -> io::Result<Vec<Vma>> {
    let text = fs::read_to_string(format!("/proc/{pid}/maps"))?;
    Ok(text.lines().filter_map(parse_line).collect())
}

/// Whether the VMA maps a file (its name is a path, and the inode is not 0).
pub fn file_backed(vma: &Vma) -> bool {
    vma.inode != 0 && vma.name.starts_with('/')
}

/// Fills in the build ID of a file-backed VMA; leaves it empty when the file has none or
/// cannot be read.
pub fn add_build_id(pid: u32, vma: &mut Vma) {
    if !file_backed(vma) {
        return;
    }
    let via_map_files = format!("/proc/{pid}/map_files/{:x}-{:x}", vma.start, vma.end);
    let id = elffile::build_id(&via_map_files).or_else(|_| {
        // Without CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE map_files cannot be opened; the
        // path is the next best thing (unless the file was deleted).
        match vma.name.strip_suffix(" (deleted)") {
            Some(_) => Err(io::Error::from_raw_os_error(libc::ENOENT)),
            None => elffile::build_id(&vma.name),
        }
    });
    if let Ok(id) = id {
        vma.build_id = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_maps_lines() {
        let v = parse_line(
            "7f1c2a000000-7f1c2a022000 r-xp 00002000 fe:01 1234     /usr/lib/x (deleted)",
        )
        .unwrap();
        assert_eq!(
            (v.start, v.end, v.offset, v.inode),
            (0x7f1c2a000000, 0x7f1c2a022000, 0x2000, 1234)
        );
        assert_eq!(v.dev, (0xfe, 1));
        assert_eq!(v.perms(), "r-xp");
        assert_eq!(v.name, "/usr/lib/x (deleted)");
        let anon = parse_line("7ffd1000-7ffd2000 rw-s 00000000 00:00 0 ").unwrap();
        assert_eq!(anon.perms(), "rw-s");
        assert!(!file_backed(&anon));
        assert!(parse_line("garbage").is_none());
    }

    #[test]
    fn own_maps_have_the_executable() -> io::Result<()> {
        let exe = fs::read_link("/proc/self/exe")?;
        let vmas = read(std::process::id())?;
        assert!(vmas.iter().any(|v| v.name == exe.to_string_lossy()));
        Ok(())
    }
}
