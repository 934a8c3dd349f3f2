// SPDX-License-Identifier: GPL-2.0

//! ELF build IDs (`.note.gnu.build-id`) of files and memory.
//!
//! C headers: [`include/linux/buildid.h`](srctree/include/linux/buildid.h),
//! [`include/linux/buildid_ref.h`](srctree/include/linux/buildid_ref.h) and
//! [`include/linux/buildid_cache.h`](srctree/include/linux/buildid_cache.h).
//!
//! Whichever implementation serves the C API (`lib/buildid.c`, or `lib/buildid/` with
//! `CONFIG_RUST_BUILDID`), this is how Rust code calls it. Documentation:
//! `Documentation/core-api/buildid.rst`.

use crate::{
    bindings,
    error::{code::*, to_result, Error, Result},
    ffi,
    fs::file::LocalFile,
};
use core::fmt;

/// The largest build ID, and the size of the zero-padded buffer the C API fills.
pub const BUILD_ID_SIZE_MAX: usize = bindings::BUILD_ID_SIZE_MAX as usize;

/// A build ID as the C API returns it.
///
/// # Invariants
///
/// `size` is in `1..=BUILD_ID_SIZE_MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildId {
    bytes: [u8; BUILD_ID_SIZE_MAX],
    size: u32,
}

impl BuildId {
    /// The build ID the C API wrote: the first `size` bytes of `bytes`, which it zero-pads.
    #[inline]
    fn from_c(bytes: [u8; BUILD_ID_SIZE_MAX], size: u32) -> Result<Self> {
        if size == 0 || size as usize > BUILD_ID_SIZE_MAX {
            return Err(EINVAL);
        }
        // INVARIANT: `size` was just checked to be in `1..=BUILD_ID_SIZE_MAX`.
        Ok(Self { bytes, size })
    }

    /// The size of the build ID in bytes (1 to [`BUILD_ID_SIZE_MAX`]).
    #[inline]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The build ID's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        // By the type invariant `size <= BUILD_ID_SIZE_MAX`, so the range is in bounds.
        self.bytes.get(..self.size as usize).unwrap_or(&self.bytes)
    }

    /// All [`BUILD_ID_SIZE_MAX`] bytes as the C API wrote them to its `build_id` buffer: zero
    /// after [`size()`](Self::size).
    #[inline]
    pub fn padded(&self) -> &[u8; BUILD_ID_SIZE_MAX] {
        &self.bytes
    }
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

/// Calls a C function that stores a build ID and its size, and returns 0 or a negative errno.
#[inline(always)]
fn call(parse: impl FnOnce(*mut u8, *mut u32) -> i32) -> Result<BuildId> {
    let mut bytes = [0u8; BUILD_ID_SIZE_MAX];
    let mut size = 0u32;
    let ret = parse(bytes.as_mut_ptr(), &mut size);
    // Not `to_result()`, an out-of-line call on paths that benchmarks time.
    if ret != 0 {
        return Err(Error::from_errno(ret));
    }
    BuildId::from_c(bytes, size)
}

/// Calls a C function that parses `notes` into a build ID zero-padded to [`BUILD_ID_SIZE_MAX`]
/// bytes, and returns 0 or a negative errno; its arguments are `notes`, the output and the length
/// of `notes`.
#[inline(always)]
fn call_buf(
    notes: &[u8],
    parse: impl FnOnce(*const ffi::c_void, *mut u8, u32) -> i32,
) -> Result<[u8; BUILD_ID_SIZE_MAX]> {
    let mut id = [0u8; BUILD_ID_SIZE_MAX];
    let len = u32::try_from(notes.len()).map_err(|_| EINVAL)?;
    to_result(parse(notes.as_ptr().cast(), id.as_mut_ptr(), len))?;
    Ok(id)
}

/// Parses the build ID of the ELF file `file` (`build_id_parse_file()`); may sleep to read it.
///
/// Fails with [`EINVAL`] if the file is not a regular ELF file with a build ID note, with
/// [`EFAULT`] for a `memfd_secret()` file, with [`EIO`] if it is shorter than its headers say, or
/// with the error of the read.
// Not inline, so that modules reach the API through this function: it is exported to them only
// for tests.
pub fn parse_file(file: &LocalFile) -> Result<BuildId> {
    // SAFETY: `file` is a valid open file for the call; `call` passes room for
    // `BUILD_ID_SIZE_MAX` bytes and a `u32`.
    call(|id, size| unsafe { bindings::build_id_parse_file(file.as_ptr(), id, size) })
}

/// Parses a build ID from `notes`, the contents of one or more ELF notes, as found in a
/// `.note.gnu.build-id` section or `PT_NOTE` segment (`build_id_parse_buf()`): the ID
/// zero-padded to [`BUILD_ID_SIZE_MAX`] bytes, since the C API does not report its size.
///
/// Fails with [`EINVAL`] if no build ID note is found.
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
/// assert_eq!(&id[..4], &[0xde, 0xad, 0xbe, 0xef]);
/// assert!(id[4..].iter().all(|&b| b == 0));
///
/// // Anything else is not a build ID note.
/// assert_eq!(buildid::parse_buf(&note[..19]), Err(EINVAL));
/// # Ok::<(), Error>(())
/// ```
// Not inline, as `parse_file()`.
pub fn parse_buf(notes: &[u8]) -> Result<[u8; BUILD_ID_SIZE_MAX]> {
    // SAFETY: `call_buf` passes `notes`, readable for the length it passes and unchanged during
    // the call, and room for `BUILD_ID_SIZE_MAX` bytes.
    call_buf(notes, |notes, id, len| unsafe {
        bindings::build_id_parse_buf(notes, id, len)
    })
}

/// Both implementations side by side (`CONFIG_BUILDID_C_REFERENCE`), for tests and benchmarks.
#[cfg(CONFIG_BUILDID_C_REFERENCE)]
pub mod testing {
    use super::{call, call_buf, BuildId, BUILD_ID_SIZE_MAX};
    use crate::{bindings, error::Result, fs::file::LocalFile};

    /// How a parse may obtain file data.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Mode {
        /// Page cache only; never sleeps; safe in atomic, IRQ and NMI context.
        Nofault,
        /// May sleep and read the file; process context only.
        Sleepable,
    }

    /// Which code parses.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Implementation {
        /// The Rust implementation as the kernel's callers reach it, through the build ID cache
        /// when it is on.
        Rust,
        /// The Rust implementation without the build ID cache.
        RustUncached,
        /// The C reference of `lib/buildid.c`.
        C,
    }

    /// Parses the build ID of `file` in `mode` with `implementation`.
    #[inline]
    pub fn parse_file(
        file: &LocalFile,
        mode: Mode,
        implementation: Implementation,
    ) -> Result<BuildId> {
        let file = file.as_ptr();
        let sleepable = if mode == Mode::Sleepable {
            bindings::BUILD_ID_RUST_SLEEPABLE
        } else {
            0
        };
        // SAFETY: `file` is a valid open file for the call; `call` passes room for
        // `BUILD_ID_SIZE_MAX` bytes and a `u32`.
        call(|id, size| unsafe {
            match (implementation, mode) {
                (Implementation::Rust, _) => {
                    bindings::build_id_rust_parse_file(file, id, size, sleepable)
                }
                (Implementation::RustUncached, _) => bindings::build_id_rust_parse_file(
                    file,
                    id,
                    size,
                    sleepable | bindings::BUILD_ID_RUST_UNCACHED,
                ),
                (Implementation::C, Mode::Nofault) => {
                    bindings::build_id_ref_parse_file_nofault(file, id, size)
                }
                (Implementation::C, Mode::Sleepable) => {
                    bindings::build_id_ref_parse_file(file, id, size)
                }
            }
        })
    }

    /// [`super::parse_buf`] with `implementation`, both called as a module calls an exported
    /// function (the cache has no part in it: `Rust` and `RustUncached` are the same).
    #[inline]
    pub fn parse_buf(
        notes: &[u8],
        implementation: Implementation,
    ) -> Result<[u8; BUILD_ID_SIZE_MAX]> {
        // SAFETY: `call_buf` passes `notes`, readable for the length it passes and unchanged
        // during the call, and room for `BUILD_ID_SIZE_MAX` bytes.
        call_buf(notes, |notes, id, len| unsafe {
            match implementation {
                Implementation::Rust | Implementation::RustUncached => {
                    bindings::build_id_parse_buf(notes, id, len)
                }
                Implementation::C => bindings::build_id_ref_parse_buf(notes, id, len),
            }
        })
    }
}

/// The build ID cache (`CONFIG_BUILDID_CACHE`): what nofault callers get without `mmap_lock`.
#[cfg(CONFIG_BUILDID_CACHE)]
pub mod cache {
    use super::{call, BuildId};
    use crate::{bindings, mm::MmWithUser};
    use core::mem::MaybeUninit;

    /// Whether lockless VMA lookups are on (`buildid_cache_lockless_vma_enabled()`); a caller
    /// with many addresses asks once for all of them.
    #[inline]
    pub fn lockless_vma_enabled() -> bool {
        // SAFETY: The function only reads the cache's switches; any context.
        unsafe { bindings::buildid_cache_lockless_vma_enabled() }
    }

    /// What a lockless lookup saw of a VMA at one instant: every address in `start..end` mapped
    /// the file whose build ID it found, `start` at file offset `offset`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct VmaRange {
        /// The first address of the VMA.
        pub start: usize,
        /// The address past the VMA.
        pub end: usize,
        /// The file offset mapped at `start`.
        pub offset: u64,
    }

    impl VmaRange {
        /// The file offset mapped at `addr`, an address in the range.
        #[inline]
        pub fn file_offset(&self, addr: usize) -> u64 {
            self.offset
                .wrapping_add(addr.wrapping_sub(self.start) as u64)
        }
    }

    /// The cached build ID of the file mapped at `addr` in `mm`, looked up without `mmap_lock`
    /// as the BPF stack helpers do (`buildid_cache_vma_lookup()`); any context.
    ///
    /// Fails with [`ENOENT`](crate::error::code::ENOENT) if no file is mapped at `addr`,
    /// [`EINVAL`](crate::error::code::EINVAL) if the file is not a regular file or has no build
    /// ID, [`EAGAIN`](crate::error::code::EAGAIN) if the VMA could not be read without its lock
    /// or the cache has no answer yet (a fill is queued).
    #[inline]
    pub fn vma_lookup(mm: &MmWithUser, addr: usize) -> crate::error::Result<(BuildId, VmaRange)> {
        let mut range = MaybeUninit::<bindings::buildid_vma_range>::uninit();
        // SAFETY: `mm` has a user for the borrow; `call` passes room for `BUILD_ID_SIZE_MAX`
        // bytes and a `u32`, and `range` is valid for writing a `struct buildid_vma_range`.
        let id = call(|id, size| unsafe {
            bindings::buildid_cache_vma_lookup(mm.as_raw(), addr as _, id, size, range.as_mut_ptr())
        })?;
        // SAFETY: A successful lookup fills `range`.
        let range = unsafe { range.assume_init() };
        Ok((
            id,
            VmaRange {
                start: range.start,
                end: range.end,
                offset: range.offset,
            },
        ))
    }
}
