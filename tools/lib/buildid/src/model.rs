// SPDX-License-Identifier: GPL-2.0

//! A model of a file and its page cache, which the kernel's own readers
//! (`lib/buildid/freader.rs`, included as [`crate::freader`]) run on here, and
//! which the C shim (`shim/buildid_shim.c`) runs the C original on.
//!
//! Both sides see the same file: its bytes, its folio size, the state of each folio
//! (absent, uptodate, or cached but not uptodate), whether it is a `memfd_secret()` file,
//! and an eviction schedule: page cache lookup `n` of a parse finds nothing when bit `n` of
//! [`FileModel::evict_mask`] is set, as if the folio had been evicted just before. `read()`
//! is `__kernel_read()` on tmpfs: it reads what is there, nothing at a negative offset or
//! past end of file.
//!
//! The model counts the folio references the reader holds, so a test can check that none
//! leaked, and the page cache lookups it made, which must be the C code's.

use crate::freader::{FolioBytes, PageCache};
use kernel::error::{code::*, Result};
use std::cell::Cell;

/// `PAGE_SIZE` of the modelled kernel (x86_64).
pub const PAGE_SIZE: u64 = 4096;
/// `PAGE_SHIFT` of the modelled kernel.
const PAGE_SHIFT: u32 = PAGE_SIZE.trailing_zeros();

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
    /// Page cache lookup `n` of a parse (`n < 64`) finds nothing when bit `n` is set.
    pub evict_mask: u64,
}

impl FileModel {
    /// A fully cached file with 4 KiB folios.
    pub fn new(data: Vec<u8>) -> Self {
        let mut f = Self {
            data,
            folio_size: PAGE_SIZE,
            cache: Vec::new(),
            secretmem: false,
            evict_mask: 0,
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

    /// Whether folio `k` is cached and uptodate.
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

/// A file of the model opened for one parse: what the kernel's readers get as their
/// [`PageCache`]. It records what they did with it.
pub struct OpenFile<'a> {
    file: &'a FileModel,
    /// Whether `__kernel_read()` gets past its first checks (`FMODE_READ`, `read_iter`).
    pub can_read: bool,
    lookups: Cell<u64>,
    references: Cell<i64>,
    reads: Cell<u64>,
    negative_reads: Cell<u64>,
}

impl<'a> OpenFile<'a> {
    /// `file`, opened for reading.
    pub fn new(file: &'a FileModel) -> Self {
        Self {
            file,
            can_read: true,
            lookups: Cell::new(0),
            references: Cell::new(0),
            reads: Cell::new(0),
            negative_reads: Cell::new(0),
        }
    }

    /// Page cache lookups so far.
    pub fn lookups(&self) -> u64 {
        self.lookups.get()
    }

    /// Folio references taken and not dropped.
    pub fn references(&self) -> i64 {
        self.references.get()
    }

    /// `__kernel_read()` calls so far.
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    /// `__kernel_read()` calls at a negative position so far: tmpfs reads nothing there, but
    /// the buffered read of a block file system never returns, so a reader must not make one.
    pub fn negative_reads(&self) -> u64 {
        self.negative_reads.get()
    }
}

/// A referenced folio of an [`OpenFile`].
pub struct ModelFolio<'a> {
    file: &'a FileModel,
    references: &'a Cell<i64>,
    pos: u64,
}

impl Drop for ModelFolio<'_> {
    fn drop(&mut self) {
        self.references.set(self.references.get() - 1);
    }
}

impl FolioBytes for ModelFolio<'_> {
    fn pos(&self) -> i64 {
        self.pos as i64
    }

    fn size(&self) -> usize {
        self.file.folio_size as usize
    }

    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        if offset > self.size() || dst.len() > self.size() - offset {
            return Err(EINVAL);
        }
        for (i, b) in dst.iter_mut().enumerate() {
            *b = self.file.cached_byte(self.pos + (offset + i) as u64);
        }
        Ok(())
    }
}

impl<'a> PageCache for &'a OpenFile<'a> {
    type Folio = ModelFolio<'a>;

    const PAGE_SHIFT: u32 = PAGE_SHIFT;

    // `MAX_LFS_FILESIZE` on 64-bit.
    const MAX_FILE_SIZE: i64 = i64::MAX;

    fn uptodate_folio(&self, index: usize) -> Option<ModelFolio<'a>> {
        let n = self.lookups.get();
        self.lookups.set(n + 1);
        if n < 64 && self.file.evict_mask >> n & 1 == 1 {
            return None;
        }
        let k = index as u64 / (self.file.folio_size >> PAGE_SHIFT);
        if !self.file.folio_readable(k) {
            return None;
        }
        self.references.set(self.references.get() + 1);
        Some(ModelFolio {
            file: self.file,
            references: &self.references,
            pos: k * self.file.folio_size,
        })
    }

    fn size(&self) -> i64 {
        self.file.data.len() as i64
    }

    fn is_secretmem(&self) -> bool {
        self.file.secretmem
    }

    fn reads_through_page_cache(&self) -> bool {
        self.can_read
    }

    fn read(&self, buf: &mut [u8], pos: i64) -> Result<usize> {
        self.reads.set(self.reads.get() + 1);
        if pos < 0 {
            self.negative_reads.set(self.negative_reads.get() + 1);
        }
        // A negative offset converts to one far beyond end of file, where tmpfs reads
        // nothing.
        let data = usize::try_from(pos)
            .ok()
            .and_then(|pos| self.file.data.get(pos..))
            .unwrap_or(&[]);
        let n = buf.len().min(data.len());
        buf[..n].copy_from_slice(&data[..n]);
        Ok(n)
    }
}
