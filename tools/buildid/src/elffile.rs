// SPDX-License-Identifier: GPL-2.0

//! Build IDs of ELF files read in user space, with the kernel's own parser
//! (`lib/buildid/elf.rs`), so that the answer is what the kernel would give.

#[allow(dead_code)]
#[path = "../../../lib/buildid/elf.rs"]
mod elf;

use kernel::error::{code::*, Error, Result};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Reads a file like the kernel's sleepable reader: a short read is `EIO`.
struct FileReader(File);

impl elf::ReadAt for FileReader {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result {
        let offset = u64::try_from(offset).map_err(|_| EINVAL)?;
        match self.0.read_exact_at(buf, offset) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(EIO),
            Err(e) => Err(e
                .raw_os_error()
                .filter(|errno| (1..=4095).contains(errno))
                .map_or(EIO, |errno| Error::from_errno(-errno))),
        }
    }
}

/// The build ID of the ELF file at `path`.
pub fn build_id(path: &str) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    elf::parse_elf(&mut FileReader(file))
        .map(|id| id.as_bytes().to_vec())
        .map_err(|error| io::Error::from_raw_os_error(-error.to_errno()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_executable_has_a_build_id() -> io::Result<()> {
        let id = build_id("/proc/self/exe")?;
        assert!(!id.is_empty() && id.len() <= 20);
        Ok(())
    }

    #[test]
    fn not_elf_is_einval() {
        let err = build_id("/proc/self/status").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        let err = build_id("/proc/self").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }
}
