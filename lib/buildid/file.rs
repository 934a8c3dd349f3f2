// SPDX-License-Identifier: GPL-2.0

//! The parser on files of the kernel: [`freader`]'s readers over an open file's page cache and
//! `__kernel_read()`, and the build ID cache in front of them.
//!
//! Two ways to read a file:
//!
//! - [`Mode::Nofault`] reads only what is already in the page cache. It never sleeps and never
//!   takes a sleeping lock, so it may be used in any context, including IRQ and NMI. It fails
//!   with [`EFAULT`] when the data it needs is not cached.
//! - [`Mode::Sleepable`] may sleep to read the file, so it needs process context without
//!   spinlocks held.

#[cfg(CONFIG_BUILDID_CACHE)]
use crate::cache;
use crate::{elf, elf::BuildId, freader};
use kernel::{
    bindings,
    error::{code::*, Error, Result},
    folio::FolioView,
    fs::file::{fmode, LocalFile},
    page::PAGE_SHIFT,
};

/// How [`parse_file`] may obtain file data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Page cache only; never sleeps; safe in atomic, IRQ and NMI context.
    Nofault,
    /// May sleep and read the file; process context only.
    Sleepable,
}

impl freader::FolioBytes for FolioView {
    #[inline(always)]
    fn pos(&self) -> i64 {
        FolioView::pos(self)
    }

    #[inline(always)]
    fn size(&self) -> usize {
        FolioView::size(self)
    }

    #[inline(always)]
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result {
        FolioView::read(self, offset, dst)
    }
}

/// The page cache of an open file, read through its `f_mapping`.
impl freader::PageCache for LocalFile {
    type Folio = FolioView;

    const PAGE_SHIFT: u32 = PAGE_SHIFT as u32;

    const MAX_FILE_SIZE: i64 = bindings::MAX_LFS_FILESIZE;

    #[inline]
    fn uptodate_folio(&self, index: usize) -> Option<FolioView> {
        FolioView::lookup_uptodate(self.mapping(), index)
    }

    fn size(&self) -> i64 {
        LocalFile::size(self)
    }

    fn is_secretmem(&self) -> bool {
        self.mapping().is_secretmem()
    }

    fn reads_through_page_cache(&self) -> bool {
        readable(self) && self.flags() & bindings::O_DIRECT == 0 && page_cache_holds_data(self)
    }

    fn read(&self, buf: &mut [u8], pos: i64) -> Result<usize> {
        kernel_read(self, buf, pos)
    }
}

/// Reads from `file` at `pos` as `lib/buildid.c` does, with `__kernel_read()`, which skips the
/// position and permission checks of `kernel_read()`; may sleep.
fn kernel_read(file: &LocalFile, buf: &mut [u8], pos: i64) -> Result<usize> {
    let mut pos = pos;
    // SAFETY: `file` is a valid open file for the call, `buf` is valid for writing `buf.len()`
    // bytes, and `pos` is a valid `loff_t` for the duration of the call.
    let ret = unsafe {
        bindings::__kernel_read(file.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut pos)
    };
    if ret < 0 {
        // `ret` is a negative errno, which fits in `c_int`.
        return Err(Error::from_errno(ret as kernel::ffi::c_int));
    }
    // `ret` is non-negative and at most `buf.len()`.
    Ok(ret as usize)
}

/// Whether `__kernel_read()` of `file` gets past its first checks: the file is open for reading
/// and has a `read_iter` method.
pub(crate) fn readable(file: &LocalFile) -> bool {
    let readable = fmode::FMODE_READ | fmode::FMODE_CAN_READ;
    file.mode() & readable == readable
}

/// Whether `file`'s page cache is where its data is: tmpfs, and file systems on a block device,
/// whose buffered reads return the uptodate folios as they are. A network file system's
/// `->read_iter` may revalidate them against the server first (NFS, FUSE, 9p), and an
/// overlayfs file reads through the file below.
pub(crate) fn page_cache_holds_data(file: &LocalFile) -> bool {
    file.mapping().is_shmem() || file.inode().super_block().fs_type().requires_dev()
}

/// Parses the build ID of the ELF file `file`, or finds it in the build ID cache.
///
/// With `CONFIG_BUILDID_CACHE` and the cache on, a cached answer for the file is returned if its
/// content cannot have changed since it was parsed; otherwise a sleepable parse fills the cache,
/// and a nofault parse queues a fill for a worker. See [`cache`].
///
/// Fails with [`EINVAL`] if the file is not a regular file, not a 32- or 64-bit ELF executable
/// or shared object, or has no build ID note; with [`EFAULT`] for a `memfd_secret` file or, in
/// [`Mode::Nofault`], for data that is not in the page cache; with [`EIO`] if the file is
/// shorter than its headers say, or with the error of the read.
// Always inlined: with [`cache::lookup`] it is the whole of a hit, which then calls nothing but
// the RCU read lock and unlock and the inode's stamp; the misses call out of line.
#[inline(always)]
pub(crate) fn parse_file(file: &LocalFile, mode: Mode) -> Result<BuildId> {
    #[cfg(CONFIG_BUILDID_CACHE)]
    if file.is_regular() {
        if let Some(cached) = cache::lookup(file, mode) {
            return cached;
        }
        // A miss, unless the cache is off.
        if cache::is_on() {
            return match mode {
                // Nofault parses run in NMI or under mmap_lock: the worker fills the cache,
                // also after a parse that succeeded, since the page cache may lose the note
                // later.
                Mode::Nofault => {
                    let result = parse_file_uncached(file, mode);
                    cache::defer_fill(file);
                    result
                }
                Mode::Sleepable => cache::parse_and_fill(file, false),
            };
        }
    }
    parse_file_uncached(file, mode)
}

/// [`parse_file`], without the build ID cache (`CONFIG_BUILDID_CACHE`): always parses.
pub(crate) fn parse_file_uncached(file: &LocalFile, mode: Mode) -> Result<BuildId> {
    // Reading a device or a FIFO may have side effects; only regular files hold ELF images.
    if !file.is_regular() {
        return Err(EINVAL);
    }
    match mode {
        Mode::Nofault => elf::parse_elf(&mut freader::NofaultReader::new(file)),
        Mode::Sleepable => elf::parse_elf(&mut freader::SleepableReader::new(file)),
    }
}

/// Parses a build ID from `notes`, the contents of one or more ELF notes, as found in a
/// `.note.gnu.build-id` section or `PT_NOTE` segment.
///
/// Fails with [`EINVAL`] if no build ID note is found, and with [`ERANGE`] if a note's header
/// claims more bytes than `notes` holds.
pub(crate) fn parse_buf(notes: &[u8]) -> Result<BuildId> {
    elf::parse_buf(notes)
}
