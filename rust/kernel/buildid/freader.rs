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

/// Bytes copied out of a folio at a time. The parser's fetches are small (at most 64 bytes)
/// and mostly sequential (ELF header, then program headers, then notes), so one copy serves
/// several fetches, where a copy per fetch would cost a call into C for each. Small enough
/// for the stacks the nofault reader runs on (NMI included).
const WINDOW_SZ: usize = 256;

/// The folio last used by a reader, kept across fetches like C keeps `r->folio`, with its
/// position and size (which do not change while it is referenced), and a copy of a window
/// of its bytes.
///
/// Dropping it drops the folio reference, so no path can leak one.
struct CachedFolio {
    folio: Option<(ARef<Folio>, i64, usize)>,
    /// Bytes `window_pos..window_pos + window_len` of the file, copied from a folio that was
    /// cached and uptodate; never more than that folio holds.
    window: [u8; WINDOW_SZ],
    window_pos: i64,
    window_len: usize,
}

impl Default for CachedFolio {
    fn default() -> Self {
        Self {
            folio: None,
            window: [0; WINDOW_SZ],
            window_pos: 0,
            window_len: 0,
        }
    }
}

impl CachedFolio {
    /// Makes `self.folio` the uptodate folio of `file` that caches byte `pos`, without
    /// sleeping.
    ///
    /// `-EFAULT` if the byte is not cached, as in C's `freader_get_folio()`.
    fn get(&mut self, file: &File, pos: i64) -> Result<(), i32> {
        let reuse = match &self.folio {
            Some((_, start, size)) => pos >= *start && pos - *start < *size as i64,
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
            let (start, size) = (folio.pos(), folio.size());
            self.folio = Some((folio, start, size));
        }
        Ok(())
    }

    /// Copies `buf.len()` bytes at `pos` from uptodate cached folios, crossing folio
    /// boundaries (of any folio size) as needed, without copying from file offsets at or past
    /// `limit`. Never sleeps.
    ///
    /// A byte is served from the window only if it was copied from a folio that holds it, so
    /// a fetch succeeds exactly when the folios holding its bytes are cached and uptodate.
    fn copy(&mut self, file: &File, pos: i64, buf: &mut [u8], limit: i64) -> Result<(), i32> {
        let mut done = 0;
        while done < buf.len() {
            // `done <= buf.len()`, which is small; `pos + done` was checked not to wrap by
            // the parser's fetch wrapper.
            let at = pos.wrapping_add(done as i64);
            if at >= limit {
                return Err(errno(EFAULT));
            }
            let in_window = at >= self.window_pos && at - self.window_pos < self.window_len as i64;
            if !in_window {
                self.refill(file, at, limit)?;
            }
            // `at` is inside the window now, so the difference is in `0..window_len`.
            let from = (at - self.window_pos) as usize;
            let chunk = (self.window_len - from).min(buf.len() - done);
            let src = self.window.get(from..from + chunk).ok_or(errno(EINVAL))?;
            let dst = buf.get_mut(done..done + chunk).ok_or(errno(EINVAL))?;
            dst.copy_from_slice(src);
            done += chunk;
        }
        Ok(())
    }

    /// Fills the window with bytes from `at` on, up to its size, the end of the folio holding
    /// `at`, or `limit`, whichever comes first.
    fn refill(&mut self, file: &File, at: i64, limit: i64) -> Result<(), i32> {
        self.window_len = 0;
        self.get(file, at)?;
        let (folio, start, size) = self.folio.as_ref().ok_or(errno(EFAULT))?;
        let (start, size) = (*start, *size);
        // `at` lies inside the folio, so the difference is in `0..size`.
        let offset = (at - start) as usize;
        // `at < limit`, so the difference is positive.
        let before_limit = usize::try_from(limit - at).unwrap_or(usize::MAX);
        let len = (size - offset).min(WINDOW_SZ).min(before_limit);
        let window = self.window.get_mut(..len).ok_or(errno(EINVAL))?;
        folio.copy_to_slice(offset, window).map_err(errno)?;
        self.window_pos = at;
        self.window_len = len;
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
    /// Reading `memfd_secret` memory would defeat its purpose. (A file's mapping never
    /// changes, so this is checked once.)
    secret: bool,
}

impl<'a> NofaultReader<'a> {
    pub(crate) fn new(file: &'a File) -> Self {
        Self {
            file,
            cache: CachedFolio::default(),
            secret: file.is_secretmem(),
        }
    }
}

impl ReadAt for NofaultReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        if self.secret {
            return Err(errno(EFAULT));
        }
        self.cache.copy(self.file, offset, buf, i64::MAX)
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
    /// As for [`NofaultReader`]: secret memory is never read.
    secret: bool,
}

impl<'a> SleepableReader<'a> {
    pub(crate) fn new(file: &'a File) -> Self {
        let readable = bindings::FMODE_READ | bindings::FMODE_CAN_READ;
        Self {
            file,
            cache: CachedFolio::default(),
            cache_usable: file.mode() & readable == readable,
            secret: file.is_secretmem(),
        }
    }

    fn cached(&mut self, offset: i64, buf: &mut [u8]) -> bool {
        if !self.cache_usable || offset < 0 {
            return false;
        }
        let size = self.file.size();
        match offset.checked_add(buf.len() as i64) {
            Some(end) if end <= size => {}
            _ => return false,
        }
        // Never copies from past end of file, where `__kernel_read` would stop short.
        self.cache.copy(self.file, offset, buf, size).is_ok()
    }
}

impl ReadAt for SleepableReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        if self.secret {
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
