// SPDX-License-Identifier: GPL-2.0

//! File readers for the build ID parser: the kernel half of C's `struct freader`.
//!
//! Both readers copy file bytes by value into the parser's buffers, so no Rust reference into
//! page-cache memory ever exists (a writer may change that memory at any time), and the parser
//! sees each byte exactly once per fetch: there is nothing to re-read under a concurrent
//! change, which is what the C code needs `READ_ONCE` for.

use super::elf::ReadAt;
use crate::{
    bindings,
    error::{code::*, Error},
    folio::Folio,
    fs::file::File,
    page::PAGE_SHIFT,
    types::ARef,
};

/// The largest file offset the page cache can index (`MAX_LFS_FILESIZE`).
const MAX_LFS_FILESIZE: i64 = bindings::MAX_LFS_FILESIZE;

fn errno(err: Error) -> i32 {
    err.to_errno()
}

/// The folio last used by a reader, kept across fetches like C keeps `r->folio`.
///
/// Dropping it drops the folio reference, so no path can leak one.
#[derive(Default)]
struct CachedFolio {
    folio: Option<ARef<Folio>>,
}

impl CachedFolio {
    /// Returns the uptodate folio of `file` that caches byte `pos`, without sleeping.
    ///
    /// `-EFAULT` if the byte is not cached, as in C's `freader_get_folio()`.
    fn get(&mut self, file: &File, pos: i64) -> Result<&Folio, i32> {
        let reuse = match &self.folio {
            Some(folio) => {
                let start = folio.pos();
                pos >= start && pos - start < folio.size() as i64
            }
            None => false,
        };
        if !reuse {
            // Release the old folio before looking up the next one, as C does.
            self.folio = None;
            // The page index must fit in `pgoff_t`.
            if !(0..=MAX_LFS_FILESIZE).contains(&pos) {
                return Err(errno(EFAULT));
            }
            // `pos` is non-negative, so the shifted value fits in `usize` (`pgoff_t`).
            let index = (pos >> PAGE_SHIFT) as usize;
            // SAFETY: `file.mapping()` is the valid address space of a referenced file.
            let folio = unsafe { Folio::lookup(file.mapping(), index) }.ok_or(errno(EFAULT))?;
            if !folio.is_uptodate() {
                return Err(errno(EFAULT));
            }
            self.folio = Some(folio);
        }
        self.folio.as_deref().ok_or(errno(EFAULT))
    }

    /// Copies `buf.len()` bytes at `pos` from uptodate cached folios, crossing folio
    /// boundaries (of any folio size) as needed. Never sleeps.
    fn copy(&mut self, file: &File, pos: i64, buf: &mut [u8]) -> Result<(), i32> {
        let mut done = 0;
        while done < buf.len() {
            // `done <= buf.len()`, which is small; `pos + done` was checked not to wrap by
            // the parser's fetch wrapper.
            let at = pos.wrapping_add(done as i64);
            let folio = self.get(file, at)?;
            // `at` lies inside the folio, so the difference is in `0..folio.size()`.
            let offset = (at - folio.pos()) as usize;
            let chunk = (folio.size() - offset).min(buf.len() - done);
            let dst = buf.get_mut(done..done + chunk).ok_or(errno(EINVAL))?;
            folio.copy_to_slice(offset, dst).map_err(errno)?;
            done += chunk;
        }
        Ok(())
    }
}

/// Reads from the page cache only: never sleeps, never takes a sleeping lock, and is usable
/// in IRQ and NMI context. Data that is not cached and uptodate fails with `-EFAULT`.
///
/// Like C, this ignores the file size: bytes past end of file in the last folio read as the
/// zeroes the page cache holds there.
pub(crate) struct NofaultReader<'a> {
    file: &'a File,
    cache: CachedFolio,
}

impl<'a> NofaultReader<'a> {
    pub(crate) fn new(file: &'a File) -> Self {
        Self {
            file,
            cache: CachedFolio::default(),
        }
    }
}

impl ReadAt for NofaultReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        // Reading `memfd_secret` memory would defeat its purpose.
        if self.file.is_secretmem() {
            return Err(errno(EFAULT));
        }
        self.cache.copy(self.file, offset, buf)
    }
}

/// Reads in sleepable context: serves a fetch from the page cache when every byte of it is
/// cached, uptodate and below the file size, and otherwise reads it with `__kernel_read`,
/// which faults the data in. A short read is `-EIO`.
///
/// C issues one `__kernel_read` per fetch of at most 64 bytes even when the data is cached;
/// going to the page cache first gives the same bytes without the per-call overhead of the
/// read path. The result only differs from C's where `__kernel_read` would fail on a file
/// whose data is nevertheless cached; to rule that out the cache is only used for files
/// opened for reading with a `read_iter` method (the checks `__kernel_read` starts with), and
/// never past end of file, where `__kernel_read` returns a short read.
pub(crate) struct SleepableReader<'a> {
    file: &'a File,
    cache: CachedFolio,
    cache_usable: bool,
}

impl<'a> SleepableReader<'a> {
    pub(crate) fn new(file: &'a File) -> Self {
        let readable = bindings::FMODE_READ | bindings::FMODE_CAN_READ;
        Self {
            file,
            cache: CachedFolio::default(),
            cache_usable: file.mode() & readable == readable,
        }
    }

    fn cached(&mut self, offset: i64, buf: &mut [u8]) -> bool {
        if !self.cache_usable || offset < 0 {
            return false;
        }
        match offset.checked_add(buf.len() as i64) {
            Some(end) if end <= self.file.size() => {}
            _ => return false,
        }
        self.cache.copy(self.file, offset, buf).is_ok()
    }
}

impl ReadAt for SleepableReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        if self.file.is_secretmem() {
            return Err(errno(EFAULT));
        }
        if self.cached(offset, buf) {
            return Ok(());
        }
        // Do not hold a folio reference across a read that may sleep for I/O.
        self.cache.folio = None;
        match self.file.kernel_read(buf, offset) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(_) => Err(errno(EIO)),
            Err(e) => Err(errno(e)),
        }
    }
}
