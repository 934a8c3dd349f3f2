// SPDX-License-Identifier: GPL-2.0

//! ELF build IDs of files and memory (`.note.gnu.build-id`).
//!
//! The Rust implementation of `lib/buildid`: it serves the C API of
//! [`include/linux/buildid.h`](srctree/include/linux/buildid.h) (see `lib/buildid_rust.rs`) and
//! offers the same parsing to Rust code.
//!
//! Two ways to read a file:
//!
//! - [`Mode::Nofault`] reads only what is already in the page cache. It never sleeps and never
//!   takes a sleeping lock, so it may be used in any context, including IRQ and NMI. It fails
//!   with [`EFAULT`] when the data it needs is not cached.
//! - [`Mode::Sleepable`] may sleep to read the file, so it needs process context without
//!   spinlocks held.
//!
//! Documentation: `Documentation/core-api/buildid.rst`.

#[cfg(CONFIG_BUILDID_CACHE)]
pub mod cache;
pub mod elf;
pub mod freader;

use crate::{
    bindings,
    error::{code::*, Error, Result},
    folio::FolioView,
    fs::file::LocalFile,
    page::PAGE_SHIFT,
};
use core::fmt;

pub use elf::{BuildId, Errno, BUILD_ID_SIZE_MAX};

/// How [`parse_file`] may obtain file data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Page cache only; never sleeps; safe in atomic, IRQ and NMI context.
    Nofault,
    /// May sleep and read the file; process context only.
    Sleepable,
}

// The parser's error numbers are those of the architecture.
const _: () = {
    assert!(Errno::EIO.to_ret() == -(bindings::EIO as i32));
    assert!(Errno::E2BIG.to_ret() == -(bindings::E2BIG as i32));
    assert!(Errno::EFAULT.to_ret() == -(bindings::EFAULT as i32));
    assert!(Errno::EINVAL.to_ret() == -(bindings::EINVAL as i32));
    assert!(Errno::ERANGE.to_ret() == -(bindings::ERANGE as i32));
    assert!(Errno::EOVERFLOW.to_ret() == -(bindings::EOVERFLOW as i32));
};

impl From<Errno> for Error {
    fn from(errno: Errno) -> Self {
        Error::from_errno(errno.to_ret())
    }
}

impl From<Error> for Errno {
    fn from(err: Error) -> Self {
        // An `Error` is always a valid errno.
        Errno::from_ret(err.to_errno()).unwrap_or(Errno::EIO)
    }
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
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), Errno> {
        FolioView::read(self, offset, dst).map_err(Errno::from)
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

    fn read(&self, buf: &mut [u8], pos: i64) -> Result<usize, Errno> {
        self.kernel_read_unchecked(buf, pos).map_err(Errno::from)
    }
}

/// Whether `__kernel_read()` of `file` gets past its first checks: the file is open for reading
/// and has a `read_iter` method.
fn readable(file: &LocalFile) -> bool {
    let readable = bindings::FMODE_READ | bindings::FMODE_CAN_READ;
    file.mode() & readable == readable
}

/// Whether `file`'s page cache is where its data is: tmpfs, and file systems on a block device,
/// whose buffered reads return the uptodate folios as they are. A network file system's
/// `->read_iter` may revalidate them against the server first (NFS, FUSE, 9p), and an
/// overlayfs file reads through the file below.
fn page_cache_holds_data(file: &LocalFile) -> bool {
    file.mapping().is_shmem() || file.inode().on_block_device()
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
///
/// The sample driver (`samples/rust/rust_buildid.rs`) calls it on the file of a descriptor and
/// on the file a VMA maps; [`parse_buf`] has an example that runs as a KUnit case.
pub fn parse_file(file: &LocalFile, mode: Mode) -> Result<BuildId> {
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
pub fn parse_file_uncached(file: &LocalFile, mode: Mode) -> Result<BuildId> {
    // Reading a device or a FIFO may have side effects; only regular files hold ELF images.
    if !file.is_regular() {
        return Err(EINVAL);
    }
    let result = match mode {
        Mode::Nofault => elf::parse_elf(&mut freader::NofaultReader::new(file)),
        Mode::Sleepable => elf::parse_elf(&mut freader::SleepableReader::new(file)),
    };
    Ok(result?)
}

/// Parses a build ID from `notes`, the contents of one or more ELF notes, as found in a
/// `.note.gnu.build-id` section or `PT_NOTE` segment.
///
/// Fails with [`EINVAL`] if no build ID note is found, and with [`ERANGE`] if a note's header
/// claims more bytes than `notes` holds.
///
/// # Examples
///
/// ```
/// use kernel::buildid;
///
/// // A note with n_namesz 4, n_descsz 4, n_type NT_GNU_BUILD_ID (3), "GNU\0", then the ID.
/// let note = [
///     4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, b'G', b'N', b'U', 0, 0xde, 0xad, 0xbe, 0xef,
/// ];
/// let id = buildid::parse_buf(&note)?;
/// assert_eq!(id.as_bytes(), &[0xde, 0xad, 0xbe, 0xef]);
/// assert_eq!(id.size(), 4);
///
/// // Anything else is not a build ID note.
/// assert_eq!(buildid::parse_buf(&note[..19]), Err(EINVAL));
/// # Ok::<(), Error>(())
/// ```
pub fn parse_buf(notes: &[u8]) -> Result<BuildId> {
    Ok(elf::parse_buf(notes)?)
}

impl fmt::Display for BuildId {
    /// Formats the build ID as lowercase hex, like `readelf -n` and `perf buildid-list`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.as_bytes() {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

/// The C parser of `lib/buildid.c`, built again under other names (`build_id_ref_*()`), for
/// differential tests and benchmarks of this implementation.
#[cfg(CONFIG_BUILDID_C_REFERENCE)]
pub mod reference {
    use super::{BuildId, Mode, BUILD_ID_SIZE_MAX};
    use crate::{
        bindings,
        error::{code::*, to_result, Result},
        fs::file::LocalFile,
    };

    /// [`super::parse_file`], done by the C reference.
    pub fn parse_file(file: &LocalFile, mode: Mode) -> Result<BuildId> {
        let mut id = [0u8; BUILD_ID_SIZE_MAX];
        let mut size = 0u32;
        // SAFETY: `file` is a valid open file for the call; `id` has room for
        // `BUILD_ID_SIZE_MAX` bytes and `size` is a valid `u32`.
        to_result(unsafe {
            match mode {
                Mode::Nofault => bindings::build_id_ref_parse_file_nofault(
                    file.as_ptr(),
                    id.as_mut_ptr(),
                    &mut size,
                ),
                Mode::Sleepable => {
                    bindings::build_id_ref_parse_file(file.as_ptr(), id.as_mut_ptr(), &mut size)
                }
            }
        })?;
        let len = usize::try_from(size).map_err(|_| EINVAL)?;
        BuildId::new(id.get(..len).ok_or(EINVAL)?).ok_or(EINVAL)
    }

    /// [`super::parse_buf`], done by the C reference: the ID zero-padded to
    /// [`BUILD_ID_SIZE_MAX`] bytes, since `build_id_parse_buf()` does not report its size.
    pub fn parse_buf(notes: &[u8]) -> Result<[u8; BUILD_ID_SIZE_MAX]> {
        let mut id = [0u8; BUILD_ID_SIZE_MAX];
        let len = u32::try_from(notes.len()).map_err(|_| EINVAL)?;
        // SAFETY: `notes` is readable for `len` bytes and `id` has room for
        // `BUILD_ID_SIZE_MAX` bytes.
        to_result(unsafe {
            bindings::build_id_ref_parse_buf(notes.as_ptr().cast(), id.as_mut_ptr(), len)
        })?;
        Ok(id)
    }
}
