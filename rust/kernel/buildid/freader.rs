// SPDX-License-Identifier: GPL-2.0

//! File readers for the build ID parser: the kernel half of C's `struct freader`.
//!
//! Like C's `freader_fetch()`, which returns a pointer into the folio when a fetch lies inside
//! one, the readers keep such a fetch where it is, and the parser then copies out only the
//! fields it looks at ([`ReadAt::read_fetched`]); a fetch that crosses folios, or comes from a
//! read, is copied into the parser's buffer. Either way the parser gets bytes by value: no Rust
//! reference into page-cache memory ever exists (a writer may change that memory at any time),
//! and each field is read once, with volatile loads ([`FolioView::read`]), which is what the C
//! code needs `READ_ONCE` for.

use super::elf::{Fetched, ReadAt};
use crate::{
    bindings,
    error::{code::*, Error},
    folio::{Folio, FolioView},
    fs::file::File,
    page::PAGE_SHIFT,
};

/// The largest file offset the page cache can index (`MAX_LFS_FILESIZE`).
const MAX_LFS_FILESIZE: i64 = bindings::MAX_LFS_FILESIZE;

fn errno(err: Error) -> i32 {
    err.to_errno()
}

/// The folio last used by a reader, kept across fetches like C keeps `r->folio`, so the
/// fetches of one parse (ELF header, program headers, notes: mostly in one folio) look the
/// page cache up once.
///
/// Dropping it drops the folio reference, so no path can leak one.
#[derive(Default)]
struct CachedFolio {
    view: Option<FolioView>,
    /// The offset in `view` and the length of the last fetch, if it was kept in place;
    /// `kept_len` is 0 if it was not.
    kept_offset: usize,
    kept_len: usize,
}

impl CachedFolio {
    /// Returns a view of the uptodate folio of `file` that caches byte `pos`, without
    /// sleeping.
    ///
    /// `-EFAULT` if the byte is not cached, as in C's `freader_get_folio()`.
    #[inline(always)]
    fn get(&mut self, file: &File, pos: i64) -> Result<&FolioView, i32> {
        let reuse = match &self.view {
            Some(view) => pos >= view.pos() && pos - view.pos() < view.size() as i64,
            None => false,
        };
        if !reuse {
            self.lookup(file, pos)?;
        }
        self.view.as_ref().ok_or(errno(EFAULT))
    }

    /// Replaces the cached folio with the one caching byte `pos`: the slow path of
    /// [`CachedFolio::get`], taken once per folio.
    fn lookup(&mut self, file: &File, pos: i64) -> Result<(), i32> {
        // Release the old folio before looking up the next one, as C does.
        self.release();
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
        self.view = Some(FolioView::new(folio));
        Ok(())
    }

    /// Drops the folio reference, and with it the fetch kept in place.
    fn release(&mut self) {
        self.kept_len = 0;
        self.view = None;
    }

    /// Keeps the `len` bytes at `pos` in place, for [`CachedFolio::read_kept`], if one uptodate
    /// cached folio holds them all and they end at or before `limit`, if there is one. Never
    /// sleeps.
    ///
    /// `-EFAULT` if byte `pos` is not cached (so copying the bytes would fail the same way);
    /// `Ok(false)` if the bytes must be copied from more than one folio.
    #[inline(always)]
    fn keep(&mut self, file: &File, pos: i64, len: usize, limit: Option<i64>) -> Result<bool, i32> {
        self.kept_len = 0;
        if limit.is_some_and(|limit| pos >= limit) {
            return Ok(false);
        }
        // Fails for a negative `pos`, which no folio caches.
        let view = self.get(file, pos)?;
        // `pos` lies inside the folio, so the difference is in `0..size`.
        let offset = (pos - view.pos()) as usize;
        if (view.size() - offset).min(room_before(pos, limit)) < len {
            return Ok(false);
        }
        self.kept_offset = offset;
        self.kept_len = len;
        Ok(true)
    }

    /// Copies bytes `at..at + dst.len()` of the fetch kept in place; zeroes if there is none
    /// or the range is not inside it.
    #[inline(always)]
    fn read_kept(&self, at: usize, dst: &mut [u8]) {
        if let Some(view) = &self.view {
            let in_fetch = at <= self.kept_len && dst.len() <= self.kept_len - at;
            // `kept_offset + at` is inside the folio when the range is inside the fetch (and
            // `read` checks it again).
            if in_fetch && view.read(self.kept_offset.wrapping_add(at), dst).is_ok() {
                return;
            }
        }
        dst.fill(0);
    }

    /// Copies `buf.len()` bytes at `pos` from uptodate cached folios, crossing folio
    /// boundaries (of any folio size) as needed, without copying from file offsets at or past
    /// `limit`, if there is one. Never sleeps.
    ///
    /// A fetch succeeds exactly when the folios holding its bytes are cached and uptodate.
    #[inline]
    fn copy(
        &mut self,
        file: &File,
        pos: i64,
        buf: &mut [u8],
        limit: Option<i64>,
    ) -> Result<(), i32> {
        self.kept_len = 0;
        let mut done = 0;
        while done < buf.len() {
            // `done <= buf.len()`, which is small; `pos + done` was checked not to wrap by
            // the parser's fetch wrapper.
            let at = pos.wrapping_add(done as i64);
            if limit.is_some_and(|limit| at >= limit) {
                return Err(errno(EFAULT));
            }
            let view = self.get(file, at)?;
            // `at` lies inside the folio, so the difference is in `0..size`.
            let offset = (at - view.pos()) as usize;
            let chunk = (view.size() - offset)
                .min(buf.len() - done)
                .min(room_before(at, limit));
            let dst = buf.get_mut(done..done + chunk).ok_or(errno(EINVAL))?;
            view.read(offset, dst).map_err(errno)?;
            done += chunk;
        }
        Ok(())
    }
}

/// The number of bytes from `pos` up to `limit`, if there is one; `pos` is not negative and
/// below `limit`.
#[inline(always)]
fn room_before(pos: i64, limit: Option<i64>) -> usize {
    // `0 <= pos < limit`, so the difference is positive.
    limit.map_or(usize::MAX, |limit| {
        usize::try_from(limit - pos).unwrap_or(usize::MAX)
    })
}

/// Reads from the page cache only: never sleeps, never takes a sleeping lock, and is usable
/// in IRQ and NMI context. Data that is not cached and uptodate fails with `-EFAULT`.
///
/// Like C, this ignores the file size: bytes past end of file in the last folio read as the
/// zeroes the page cache holds there.
///
/// # Invariants
///
/// `file` is not a `memfd_secret()` file.
pub(crate) struct NofaultReader<'a> {
    file: &'a File,
    cache: CachedFolio,
}

impl<'a> NofaultReader<'a> {
    /// A reader of `file`, or `-EFAULT` for a `memfd_secret()` file: C fails every fetch of
    /// those, and so the parse at its first fetch, because reading that memory would defeat
    /// its purpose. (A file's mapping never changes, so this is checked once.)
    pub(crate) fn new(file: &'a File) -> Result<Self, i32> {
        if file.is_secretmem() {
            return Err(errno(EFAULT));
        }
        // INVARIANT: Checked above.
        Ok(Self {
            file,
            cache: CachedFolio::default(),
        })
    }
}

impl ReadAt for NofaultReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        self.cache.copy(self.file, offset, buf, None)
    }

    #[inline(always)]
    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched, i32> {
        if self.cache.keep(self.file, offset, buf.len(), None)? {
            return Ok(Fetched::InReader);
        }
        self.cache.copy(self.file, offset, buf, None)?;
        Ok(Fetched::InBuffer)
    }

    #[inline(always)]
    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        self.cache.read_kept(at, dst);
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
///
/// # Invariants
///
/// `file` is not a `memfd_secret()` file.
pub(crate) struct SleepableReader<'a> {
    file: &'a File,
    cache: CachedFolio,
    cache_usable: bool,
}

impl<'a> SleepableReader<'a> {
    /// A reader of `file`, or `-EFAULT` for a `memfd_secret()` file, as for
    /// [`NofaultReader::new`].
    pub(crate) fn new(file: &'a File) -> Result<Self, i32> {
        if file.is_secretmem() {
            return Err(errno(EFAULT));
        }
        let readable = bindings::FMODE_READ | bindings::FMODE_CAN_READ;
        // INVARIANT: Checked above.
        Ok(Self {
            file,
            cache: CachedFolio::default(),
            cache_usable: file.mode() & readable == readable,
        })
    }

    /// The file size, if the `len` bytes at `offset` may be served from the page cache:
    /// `__kernel_read` would read them all.
    fn cache_limit(&self, offset: i64, len: usize) -> Option<i64> {
        if !self.cache_usable || offset < 0 {
            return None;
        }
        let size = self.file.size();
        match offset.checked_add(len as i64) {
            Some(end) if end <= size => Some(size),
            _ => None,
        }
    }

    /// Reads `buf.len()` bytes at `offset` with `__kernel_read`.
    fn read(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        // Do not hold a folio reference across a read that may sleep for I/O.
        self.cache.release();
        match self.file.kernel_read(buf, offset) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(_) => Err(errno(EIO)),
            Err(e) => Err(errno(e)),
        }
    }
}

impl ReadAt for SleepableReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        if self.fetch_at(offset, buf)? == Fetched::InReader {
            self.read_fetched(0, buf);
        }
        Ok(())
    }

    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched, i32> {
        if let Some(size) = self.cache_limit(offset, buf.len()) {
            match self.cache.keep(self.file, offset, buf.len(), Some(size)) {
                Ok(true) => return Ok(Fetched::InReader),
                Ok(false) => {
                    if self.cache.copy(self.file, offset, buf, Some(size)).is_ok() {
                        return Ok(Fetched::InBuffer);
                    }
                }
                Err(_) => {}
            }
        }
        self.read(offset, buf)?;
        Ok(Fetched::InBuffer)
    }

    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        self.cache.read_kept(at, dst);
    }
}
