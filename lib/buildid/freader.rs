// SPDX-License-Identifier: GPL-2.0

//! File readers for the build ID parser: the file-backed half of C's `struct freader`.
//!
//! Like C's `freader_fetch()`, which returns a pointer into the folio when a fetch lies inside
//! one, the readers keep such a fetch where it is, and the parser then copies out only the
//! fields it looks at ([`ReadAt::read_fetched`]); a fetch that crosses folios, or comes from a
//! read, is copied into the parser's buffer. Either way the parser gets bytes by value: no
//! reference into page-cache memory ever exists (a writer may change that memory at any time),
//! and each field is read once ([`FolioBytes::read`]), which is what the C code needs
//! `READ_ONCE` for.
//!
//! The readers work on any [`PageCache`]: in the kernel, an open file and its page cache; in
//! the host tests (`tools/lib/buildid`, which includes this very file), a model of one that
//! evicts folios at random, so that the cross-folio logic here is what the differential tests
//! against the C code run. Like `elf.rs`, this file uses only `core` and `kernel::error`, and no
//! `unsafe` code.

#![forbid(unsafe_code)]

use super::elf::{Fetched, ReadAt};
use kernel::error::{code::*, Result};

/// The page cache of one file, and its read path, as the readers use them.
pub trait PageCache {
    /// A referenced folio: it stays in memory, with the same position and size, until dropped.
    type Folio: FolioBytes;

    /// `PAGE_SHIFT`: folios are looked up by page index.
    const PAGE_SHIFT: u32;

    /// The largest file offset the page cache can index (`MAX_LFS_FILESIZE`).
    const MAX_FILE_SIZE: i64;

    /// The uptodate folio that caches page `index`, without sleeping or taking a sleeping
    /// lock; `None` if no folio caches it or the one that does is not uptodate.
    fn uptodate_folio(&self, index: usize) -> Option<Self::Folio>;

    /// The file size (`i_size_read()`).
    fn size(&self) -> i64;

    /// Whether the file is a `memfd_secret()` file, whose memory the kernel must not read.
    fn is_secretmem(&self) -> bool;

    /// Whether [`PageCache::read`] returns what the page cache holds wherever it holds an
    /// uptodate folio: the file can be read, its reads go through the page cache (no
    /// `O_DIRECT`), and its file system keeps no newer copy elsewhere (a server's, for a
    /// network file system). Only then may a read be served from the page cache instead.
    fn reads_through_page_cache(&self) -> bool;

    /// Reads into `buf` from file position `pos` (`__kernel_read()`), which may sleep.
    /// Returns the number of bytes read: fewer than `buf.len()` at end of file.
    fn read(&self, buf: &mut [u8], pos: i64) -> Result<usize>;
}

/// The bytes of a referenced folio, copied out by value.
pub trait FolioBytes {
    /// The byte position of the folio in its file.
    fn pos(&self) -> i64;

    /// The number of bytes in the folio.
    fn size(&self) -> usize;

    /// Copies `dst.len()` bytes at `offset` within the folio into `dst`, each byte loaded once;
    /// [`EINVAL`] if the range is not inside the folio.
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result;
}

/// The folio last used by a reader, kept across fetches like C keeps `r->folio`, so the
/// fetches of one parse (ELF header, program headers, notes: mostly in one folio) look the
/// page cache up once.
///
/// Dropping it drops the folio reference, so no path can leak one.
///
/// # Invariants
///
/// `folio` is `None` while `secretmem` is set.
struct CachedFolio<F> {
    folio: Option<F>,
    /// The offset in `folio` and the length of the last fetch, if it was kept in place;
    /// `kept_len` is 0 if it was not.
    kept_offset: usize,
    kept_len: usize,
    /// The file is a `memfd_secret()` file: no folio of it is ever looked up.
    secretmem: bool,
}

impl<F: FolioBytes> CachedFolio<F> {
    /// A reader's folio cache for `cache`, whose mapping never changes, so it is asked once
    /// whether it is a `memfd_secret()` one.
    fn new<C: PageCache<Folio = F>>(cache: &C) -> Self {
        // INVARIANT: No folio yet.
        Self {
            folio: None,
            kept_offset: 0,
            kept_len: 0,
            secretmem: cache.is_secretmem(),
        }
    }

    /// Returns the uptodate folio of `cache` that caches byte `pos`, without sleeping.
    ///
    /// [`EFAULT`] if the byte is not cached, as in C's `freader_get_folio()`.
    #[inline(always)]
    fn get<C: PageCache<Folio = F>>(&mut self, cache: &C, pos: i64) -> Result<&F> {
        let reuse = match &self.folio {
            Some(folio) => holds(folio, pos),
            None => false,
        };
        if !reuse {
            self.lookup(cache, pos)?;
        }
        self.folio.as_ref().ok_or(EFAULT)
    }

    /// Replaces the cached folio with the one caching byte `pos`: the slow path of
    /// [`CachedFolio::get`], taken once per folio.
    ///
    /// [`EFAULT`] for a `memfd_secret()` file, whose memory the kernel must not read:
    /// C fails every fetch of one so, after the fetch's overflow check. Every fetch from the
    /// page cache of such a file gets here, as no folio of it is ever held; a check in each
    /// fetch instead made a nofault parse 10 to 20% slower on the benchmark kernel.
    fn lookup<C: PageCache<Folio = F>>(&mut self, cache: &C, pos: i64) -> Result {
        // Release the old folio before looking up the next one, as C does.
        self.release();
        if self.secretmem {
            return Err(EFAULT);
        }
        // The page index must fit in `pgoff_t`.
        if !(0..=C::MAX_FILE_SIZE).contains(&pos) {
            return Err(EFAULT);
        }
        // `pos` is not negative and at most `MAX_LFS_FILESIZE`, so the index fits in `usize`
        // (`pgoff_t`).
        let index = usize::try_from(pos >> C::PAGE_SHIFT).map_err(|_| EFAULT)?;
        let folio = cache.uptodate_folio(index).ok_or(EFAULT)?;
        // A folio that does not hold `pos` would make `get` read the wrong bytes.
        if !holds(&folio, pos) {
            return Err(EFAULT);
        }
        // INVARIANT: `secretmem` is not set (checked above).
        self.folio = Some(folio);
        Ok(())
    }

    /// Drops the folio reference, and with it the fetch kept in place.
    fn release(&mut self) {
        self.kept_len = 0;
        self.folio = None;
    }

    /// Keeps the `len` bytes at `pos` in place, for [`CachedFolio::read_kept`], if one uptodate
    /// cached folio holds them all and they end at or before `limit`, if there is one. Never
    /// sleeps.
    ///
    /// [`EFAULT`] if byte `pos` is not cached (so copying the bytes would fail the same
    /// way); `Ok(false)` if the bytes must be copied from more than one folio.
    #[inline(always)]
    fn keep<C: PageCache<Folio = F>>(
        &mut self,
        cache: &C,
        pos: i64,
        len: usize,
        limit: Option<i64>,
    ) -> Result<bool> {
        self.kept_len = 0;
        if limit.is_some_and(|limit| pos >= limit) {
            return Ok(false);
        }
        // Fails for a negative `pos`, which no folio caches.
        let folio = self.get(cache, pos)?;
        // `pos` lies inside the folio, so the difference is in `0..size`.
        let offset = (pos - folio.pos()) as usize;
        if (folio.size() - offset).min(room_before(pos, limit)) < len {
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
        if let Some(folio) = &self.folio {
            let in_fetch = at <= self.kept_len && dst.len() <= self.kept_len - at;
            // `kept_offset + at` is inside the folio when the range is inside the fetch (and
            // `read` checks it again).
            if in_fetch && folio.read(self.kept_offset.wrapping_add(at), dst).is_ok() {
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
    fn copy<C: PageCache<Folio = F>>(
        &mut self,
        cache: &C,
        pos: i64,
        buf: &mut [u8],
        limit: Option<i64>,
    ) -> Result {
        self.kept_len = 0;
        let mut done = 0;
        while done < buf.len() {
            // `done <= buf.len()`, which is small; `pos + done` was checked not to wrap by
            // the parser's fetch wrapper.
            let at = pos.wrapping_add(done as i64);
            if limit.is_some_and(|limit| at >= limit) {
                return Err(EFAULT);
            }
            let folio = self.get(cache, at)?;
            // `at` lies inside the folio, so the difference is in `0..size`.
            let offset = (at - folio.pos()) as usize;
            let chunk = (folio.size() - offset)
                .min(buf.len() - done)
                .min(room_before(at, limit));
            let dst = buf.get_mut(done..done + chunk).ok_or(EINVAL)?;
            folio.read(offset, dst)?;
            done += chunk;
        }
        Ok(())
    }
}

/// Whether `folio` caches the byte at file position `pos`.
#[inline(always)]
fn holds<F: FolioBytes>(folio: &F, pos: i64) -> bool {
    pos >= folio.pos() && pos - folio.pos() < folio.size() as i64
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
/// in IRQ and NMI context. Data that is not cached and uptodate fails with [`EFAULT`].
///
/// Like C, this ignores the file size: bytes past end of file in the last folio read as the
/// zeroes the page cache holds there.
pub struct NofaultReader<'a, C: PageCache> {
    file: &'a C,
    cache: CachedFolio<C::Folio>,
}

impl<'a, C: PageCache> NofaultReader<'a, C> {
    /// A reader of `file`.
    pub fn new(file: &'a C) -> Self {
        Self {
            file,
            cache: CachedFolio::new(file),
        }
    }
}

// A `memfd_secret()` file fails each fetch in the folio lookup ([`CachedFolio::lookup`]).
impl<C: PageCache> ReadAt for NofaultReader<'_, C> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result {
        // C looks the folio up for an empty fetch too: it fails where a longer one would.
        if buf.is_empty() {
            return self.cache.get(self.file, offset).map(|_| ());
        }
        self.cache.copy(self.file, offset, buf, None)
    }

    #[inline(always)]
    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched> {
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

/// C fails every fetch from a `memfd_secret()` file with `-EFAULT`, after the checks every
/// fetch starts with: reading that memory would defeat its purpose.
#[inline(always)]
fn reject_secretmem(secretmem: bool) -> Result {
    if secretmem {
        return Err(EFAULT);
    }
    Ok(())
}

/// Reads in sleepable context: serves a fetch from the page cache when every byte of it is
/// cached, uptodate and below the file size, and otherwise reads it with `__kernel_read`,
/// which faults the data in. A short read is [`EIO`].
///
/// C issues one `__kernel_read` per fetch of at most 64 bytes even when the data is cached;
/// going to the page cache first gives the same bytes without the per-call overhead of the
/// read path, but only where the read would return the page cache's bytes
/// ([`PageCache::reads_through_page_cache`]: not for `O_DIRECT` files, whose reads fail where
/// C's fail, nor for file systems whose `->read_iter` revalidates against a server), and never
/// past end of file, where `__kernel_read` returns a short read.
pub struct SleepableReader<'a, C: PageCache> {
    file: &'a C,
    cache: CachedFolio<C::Folio>,
    cache_usable: bool,
}

impl<'a, C: PageCache> SleepableReader<'a, C> {
    /// A reader of `file`.
    pub fn new(file: &'a C) -> Self {
        Self {
            file,
            cache: CachedFolio::new(file),
            cache_usable: file.reads_through_page_cache(),
        }
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
    ///
    /// A negative `offset` (an ELF offset of 2^63 or more) is [`EIO`] without a read:
    /// `__kernel_read` does not check the position, and the buffered read of a block file
    /// system retries for ever at a negative one (`filemap_get_pages()` computes an empty
    /// range). Nothing can be read there, so it is the short read tmpfs returns.
    fn read(&mut self, offset: i64, buf: &mut [u8]) -> Result {
        if offset < 0 {
            return Err(EIO);
        }
        // Do not hold a folio reference across a read that may sleep for I/O.
        self.cache.release();
        match self.file.read(buf, offset)? {
            n if n == buf.len() => Ok(()),
            _ => Err(EIO),
        }
    }
}

impl<C: PageCache> ReadAt for SleepableReader<'_, C> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result {
        if self.fetch_at(offset, buf)? == Fetched::InReader {
            self.read_fetched(0, buf);
        }
        Ok(())
    }

    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched> {
        reject_secretmem(self.cache.secretmem)?;
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
