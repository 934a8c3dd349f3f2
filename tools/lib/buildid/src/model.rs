// SPDX-License-Identifier: GPL-2.0

//! Host models of the kernel readers, as [`ReadAt`] implementations.
//!
//! They reproduce, for an in-memory file, the errors the mode-specific half of the C
//! `freader_fetch()` produces, and they agree with the C shim (`shim/buildid_shim.c`)
//! that backs the compiled C original, so that both implementations see the same
//! "file":
//!
//! - [`SleepableReader`]: `__kernel_read()`; a short read (end of file) is `-EIO`.
//!   `__kernel_read()` does not call `rw_verify_area()`, so a negative offset, or one
//!   whose `pos + count` is beyond `LLONG_MAX`, goes to the file system, and tmpfs
//!   reads nothing there: `-EIO` too.
//! - [`NofaultReader`]: page cache lookups only; an offset that is negative or beyond
//!   `MAX_LFS_FILESIZE`, a folio that is absent or not uptodate is `-EFAULT`. Bytes
//!   past end of file inside the last folio read as zeroes, like the page cache.
//!
//! Both return `-EFAULT` for a secretmem mapping and `-E2BIG` when asked for more
//! than the C bounce buffer holds.

use crate::elf::{Fetched, ReadAt, E2BIG, MAX_FREADER_BUF_SZ};

/// `EIO`.
pub const EIO: i32 = 5;
/// `EFAULT`.
pub const EFAULT: i32 = 14;
/// `PAGE_SIZE` of the modelled kernel (x86_64).
pub const PAGE_SIZE: u64 = 4096;

/// Page cache state of one folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Folio {
    /// Not in the page cache: `filemap_get_folio()` fails.
    Absent = 0,
    /// Cached and uptodate: readable without faulting.
    Uptodate = 1,
    /// Cached but `!folio_test_uptodate()`: the C code puts it and fails.
    NotUptodate = 2,
}

/// An in-memory file plus the state of its page cache.
#[derive(Clone, Debug)]
pub struct FileModel {
    /// File contents (`i_size` is `data.len()`).
    pub data: Vec<u8>,
    /// Folio size in bytes: a power of two, at least [`PAGE_SIZE`]. Folios are
    /// naturally aligned.
    pub folio_size: u64,
    /// State of folio `k` (covering `k * folio_size ..`); folios past the end of this
    /// vector, and folios entirely past end of file, are absent.
    pub cache: Vec<Folio>,
    /// Whether the mapping is a `memfd_secret()` one.
    pub secretmem: bool,
}

impl FileModel {
    /// A fully cached file with 4 KiB folios.
    pub fn new(data: Vec<u8>) -> Self {
        let mut f = Self {
            data,
            folio_size: PAGE_SIZE,
            cache: Vec::new(),
            secretmem: false,
        };
        f.cache = vec![Folio::Uptodate; f.nr_folios() as usize];
        f
    }

    /// Same file, with `folio_size` folios that are all cached.
    pub fn with_folio_size(mut self, folio_size: u64) -> Self {
        assert!(folio_size >= PAGE_SIZE && folio_size.is_power_of_two());
        self.folio_size = folio_size;
        self.cache = vec![Folio::Uptodate; self.nr_folios() as usize];
        self
    }

    /// Same file, with the given page cache state.
    pub fn with_cache(mut self, cache: Vec<Folio>) -> Self {
        self.cache = cache;
        self
    }

    /// Number of folios that can exist for this file.
    pub fn nr_folios(&self) -> u64 {
        (self.data.len() as u64).div_ceil(self.folio_size)
    }

    /// Whether folio `k` can be read without faulting.
    pub fn folio_readable(&self, k: u64) -> bool {
        k < self.nr_folios()
            && usize::try_from(k)
                .ok()
                .and_then(|k| self.cache.get(k))
                .is_some_and(|s| *s == Folio::Uptodate)
    }

    /// The byte at `pos` as seen through the page cache (0 past end of file).
    fn cached_byte(&self, pos: u64) -> u8 {
        usize::try_from(pos)
            .ok()
            .and_then(|p| self.data.get(p))
            .copied()
            .unwrap_or(0)
    }
}

/// Sleepable reader (`may_fault == true`): models `__kernel_read()` on a regular
/// file, and records every call it gets (offset, length), which the tests compare
/// against the calls the C code makes to `__kernel_read()`.
pub struct SleepableReader<'a> {
    file: &'a FileModel,
    /// `(offset, length)` of every read that got past the secretmem check.
    pub trace: Vec<(i64, u64)>,
}

impl<'a> SleepableReader<'a> {
    /// A reader over `file`.
    pub fn new(file: &'a FileModel) -> Self {
        Self {
            file,
            trace: Vec::new(),
        }
    }
}

impl ReadAt for SleepableReader<'_> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        if buf.len() > MAX_FREADER_BUF_SZ {
            return Err(-E2BIG);
        }
        if self.file.secretmem {
            return Err(-EFAULT);
        }
        let count = buf.len() as u64;
        self.trace.push((offset, count));
        // A short read (including 0 bytes at/after EOF) fails with -EIO. A negative
        // offset converts to one far beyond EOF, where tmpfs reads nothing.
        let start = offset as u64;
        let len = self.file.data.len() as u64;
        if start >= len || len - start < count {
            return Err(-EIO);
        }
        let start = start as usize;
        buf.copy_from_slice(&self.file.data[start..start + buf.len()]);
        Ok(())
    }
}

/// Non-faulting reader (`may_fault == false`): page cache lookups only.
///
/// Like the kernel's, it keeps a fetch that lies inside one folio in place
/// ([`Fetched::InReader`]) and copies the others, so the parser's field reads from the
/// reader are checked against C too. A kept fetch fills the parser's buffer with a poison
/// pattern, which would show if the parser read it.
pub struct NofaultReader<'a> {
    file: &'a FileModel,
    /// Offset and length of the fetch kept in place.
    kept: Option<(u64, usize)>,
}

/// What a fetch kept in place leaves in the parser's buffer.
const POISON: u8 = 0xa5;

impl<'a> NofaultReader<'a> {
    /// A reader over `file`.
    pub fn new(file: &'a FileModel) -> Self {
        Self { file, kept: None }
    }
}

impl ReadAt for NofaultReader<'_> {
    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched, i32> {
        self.kept = None;
        self.read_at(offset, buf)?;
        // The checks of `read_at` passed, so `offset` is not negative.
        let start = offset as u64;
        let fs = self.file.folio_size;
        if start / fs != (start + buf.len() as u64).saturating_sub(1) / fs {
            return Ok(Fetched::InBuffer);
        }
        buf.fill(POISON);
        self.kept = Some((start, buf.len()));
        Ok(Fetched::InReader)
    }

    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        match self.kept {
            Some((start, len)) if at + dst.len() <= len => {
                for (i, b) in dst.iter_mut().enumerate() {
                    *b = self.file.cached_byte(start + (at + i) as u64);
                }
            }
            _ => panic!(
                "read_fetched({at}, {}) outside the kept fetch {:?}",
                dst.len(),
                self.kept
            ),
        }
    }

    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        if buf.len() > MAX_FREADER_BUF_SZ {
            return Err(-E2BIG);
        }
        if self.file.secretmem {
            return Err(-EFAULT);
        }
        // "the page index must fit in pgoff_t": offset < 0 || offset > MAX_LFS_FILESIZE
        // (i64::MAX, so only the first half can be true for an i64).
        if offset < 0 {
            return Err(-EFAULT);
        }
        let start = offset as u64;
        let fs = self.file.folio_size;
        let first = start / fs;
        if !self.file.folio_readable(first) {
            return Err(-EFAULT);
        }
        // A request crossing into the next folio needs that folio too (requests are
        // at most 64 bytes, folios at least 4096, so at most two folios).
        let end = start + buf.len() as u64;
        if end > (first + 1) * fs && !self.file.folio_readable(first + 1) {
            return Err(-EFAULT);
        }
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.file.cached_byte(start + i as u64);
        }
        Ok(())
    }
}
