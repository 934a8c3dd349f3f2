// SPDX-License-Identifier: GPL-2.0

//! The Rust implementation of `lib/buildid`: ELF build IDs (`.note.gnu.build-id`) of files and
//! memory, for the C API of [`include/linux/buildid.h`](srctree/include/linux/buildid.h).
//!
//! [`elf`] is the parser, safe Rust that sees the file only through its [`elf::ReadAt`] trait;
//! [`freader`] the readers of a file's page cache and of `__kernel_read()`, on any
//! [`freader::PageCache`]; [`file`] puts them on the kernel's files (and, with
//! `CONFIG_BUILDID_CACHE`, the build ID [`cache`] in front of them). `elf.rs` and `freader.rs`
//! depend on nothing of the kernel but `kernel::error`, so that the host crate `tools/lib/buildid`
//! builds them too and tests them against the C parser.
//!
//! The functions here convert their raw pointers once, call the safe code and return what
//! `lib/buildid.c` returns: 0 on success, a negative errno otherwise.
//!
//! Documentation: `Documentation/core-api/buildid.rst`.

#[cfg(CONFIG_BUILDID_CACHE)]
mod cache;
// Also the API of the host crate that tests them (`tools/lib/buildid`), for which their items are
// `pub`.
#[allow(unreachable_pub)]
mod elf;
mod file;
#[allow(unreachable_pub)]
mod freader;

use elf::{BuildId, BUILD_ID_SIZE_MAX};
use file::{parse_buf, parse_file, Mode};
use kernel::{
    bindings,
    error::{code::*, Result},
    ffi::{c_int, c_uchar, c_void},
    fs::file::File,
    mm::virt::VmaRef,
};

/// Stores `id` as C does: 20 bytes, zero-padded, and the size if `size` is not NULL.
///
/// # Safety
///
/// `build_id` must be valid for writing [`BUILD_ID_SIZE_MAX`] bytes; `size` must be NULL or
/// valid for writing a `u32`.
unsafe fn store(result: Result<BuildId>, build_id: *mut c_uchar, size: *mut u32) -> c_int {
    match result {
        Ok(id) => {
            // SAFETY: The caller guarantees `build_id` is valid for `BUILD_ID_SIZE_MAX` bytes.
            unsafe {
                core::ptr::copy_nonoverlapping(id.padded().as_ptr(), build_id, BUILD_ID_SIZE_MAX)
            };
            if !size.is_null() {
                // SAFETY: `size` is not NULL, so the caller guarantees it is writable.
                unsafe { size.write(id.size()) };
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Parses the build ID of the file mapped by `vma` in `mode`.
///
/// # Safety
///
/// `vma` must point to a valid VMA whose lock (the mmap lock or its per-VMA lock) the caller
/// holds for the call; `build_id` and `size` as for [`store`].
unsafe fn parse_vma(
    vma: *mut bindings::vm_area_struct,
    build_id: *mut c_uchar,
    size: *mut u32,
    mode: Mode,
) -> c_int {
    // SAFETY: The caller guarantees that `vma` is valid and holds its lock for the call.
    let vma = unsafe { VmaRef::from_raw(vma) };
    let Some(file) = vma.vm_file() else {
        return EINVAL.to_errno();
    };
    // SAFETY: Forwarded from the caller.
    unsafe { store(parse_file(file, mode), build_id, size) }
}

/// Parses the build ID of the ELF file mapped by `vma`; may sleep to read file data.
///
/// Returns 0 on success, a negative errno otherwise.
///
/// # Safety
///
/// `vma` must be a valid VMA whose mmap lock or per-VMA lock the caller holds for the call;
/// `build_id` must be valid for writing `BUILD_ID_SIZE_MAX` bytes; `size` must be NULL or valid
/// for writing.
#[no_mangle]
pub unsafe extern "C" fn build_id_parse(
    vma: *mut bindings::vm_area_struct,
    build_id: *mut c_uchar,
    size: *mut u32,
) -> c_int {
    // SAFETY: Forwarded from the caller.
    unsafe { parse_vma(vma, build_id, size, Mode::Sleepable) }
}

/// Parses the build ID of the ELF file mapped by `vma` from the page cache only; never sleeps.
///
/// Returns 0 on success, `-EFAULT` if needed data is not cached, another negative errno
/// otherwise.
///
/// # Safety
///
/// As for [`build_id_parse`].
#[no_mangle]
pub unsafe extern "C" fn build_id_parse_nofault(
    vma: *mut bindings::vm_area_struct,
    build_id: *mut c_uchar,
    size: *mut u32,
) -> c_int {
    // SAFETY: Forwarded from the caller.
    unsafe { parse_vma(vma, build_id, size, Mode::Nofault) }
}

/// Parses the build ID of the ELF file `file`; may sleep to read file data.
///
/// Returns 0 on success, a negative errno otherwise.
///
/// # Safety
///
/// `file` must be a valid, referenced file; `build_id` and `size` as for [`build_id_parse`].
#[no_mangle]
pub unsafe extern "C" fn build_id_parse_file(
    file: *mut bindings::file,
    build_id: *mut c_uchar,
    size: *mut u32,
) -> c_int {
    // SAFETY: The caller guarantees that `file` is valid and referenced during the call.
    let file = unsafe { File::from_raw_file(file) };
    // SAFETY: Forwarded from the caller.
    unsafe { store(parse_file(file, Mode::Sleepable), build_id, size) }
}

/// Parses the build ID from `buf_size` bytes of ELF notes at `buf`.
///
/// Returns 0 on success, `-EINVAL` if there is no build ID note.
///
/// # Safety
///
/// `buf` must be valid for reading `buf_size` bytes that do not change during the call;
/// `build_id` must be valid for writing `BUILD_ID_SIZE_MAX` bytes.
#[no_mangle]
pub unsafe extern "C" fn build_id_parse_buf(
    buf: *const c_void,
    build_id: *mut c_uchar,
    buf_size: u32,
) -> c_int {
    let notes = if buf_size == 0 {
        &[][..]
    } else {
        // SAFETY: The caller guarantees `buf` is valid for `buf_size` bytes of stable memory
        // (the notes of the kernel image or of a module), and `buf_size` is not zero, so `buf`
        // is not NULL.
        unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), buf_size as usize) }
    };
    // SAFETY: Forwarded from the caller; `size` is NULL.
    unsafe { store(parse_buf(notes), build_id, core::ptr::null_mut()) }
}

/// Parses the build ID of the ELF file `file` as `build_id_parse_file()` (with
/// `BUILD_ID_RUST_SLEEPABLE` in `flags`) or `build_id_parse_nofault()` do, or without the build
/// ID cache (`BUILD_ID_RUST_UNCACHED`): the Rust half of `<linux/buildid_ref.h>`, for tests and
/// benchmarks that compare it with the C reference.
///
/// # Safety
///
/// `file` must be a valid, referenced file; `build_id` and `size` as for [`build_id_parse`]; with
/// `BUILD_ID_RUST_SLEEPABLE`, the caller must be allowed to sleep.
#[cfg(CONFIG_BUILDID_C_REFERENCE)]
#[no_mangle]
pub unsafe extern "C" fn build_id_rust_parse_file(
    file: *mut bindings::file,
    build_id: *mut c_uchar,
    size: *mut u32,
    flags: kernel::ffi::c_uint,
) -> c_int {
    let known = bindings::BUILD_ID_RUST_SLEEPABLE | bindings::BUILD_ID_RUST_UNCACHED;
    if flags & !known != 0 {
        return EINVAL.to_errno();
    }
    let mode = if flags & bindings::BUILD_ID_RUST_SLEEPABLE != 0 {
        Mode::Sleepable
    } else {
        Mode::Nofault
    };
    // SAFETY: The caller guarantees that `file` is valid and referenced during the call.
    let file = unsafe { File::from_raw_file(file) };
    let result = if flags & bindings::BUILD_ID_RUST_UNCACHED != 0 {
        file::parse_file_uncached(file, mode)
    } else {
        parse_file(file, mode)
    };
    // SAFETY: Forwarded from the caller.
    unsafe { store(result, build_id, size) }
}

/// The C ABI of the build ID cache's Rust half (`include/linux/buildid_cache.h`): conversions
/// only; the state is [`cache`]'s and `lib/buildid_cache.c`'s.
#[cfg(CONFIG_BUILDID_CACHE)]
pub mod cache_exports {
    use crate::{cache, file::Mode};
    use kernel::{
        bindings,
        error::{code::*, Result},
        ffi::{c_int, c_uchar, c_uint, c_ulong},
        fs::file::File,
        mm::MmWithUser,
    };

    /// Looks up the cached build ID of `file`, without parsing; any context, NMI included.
    ///
    /// Returns 0 and stores the ID as `build_id_parse()` does on a hit, `-EINVAL` if the file
    /// is cached as having no build ID, `-ENOENT` on a miss.
    ///
    /// # Safety
    ///
    /// `file` must be a valid, referenced file for the call; `build_id` and `size` as for
    /// `build_id_parse()`.
    #[no_mangle]
    pub unsafe extern "C" fn buildid_cache_lookup(
        file: *mut bindings::file,
        build_id: *mut c_uchar,
        size: *mut u32,
    ) -> c_int {
        // SAFETY: The caller guarantees that `file` is valid and referenced during the call.
        let file = unsafe { File::from_raw_file(file) };
        let result = cache::lookup(file, Mode::Nofault).unwrap_or(Err(ENOENT));
        // SAFETY: Forwarded from the caller.
        unsafe { super::store(result, build_id, size) }
    }

    /// Looks up the cached build ID of the file mapped at `addr` in `mm` without `mmap_lock`; any
    /// context, NMI included. See [`cache::vma_lookup`].
    ///
    /// Returns 0 and stores the ID as `build_id_parse()` does, and the VMA's range in `range`;
    /// `-ENOENT` if no file was mapped at `addr`; `-EINVAL` if the file is not a regular file or
    /// is cached as having no build ID; `-EAGAIN` if the VMA could not be read without its lock
    /// or the cache has no answer yet (a fill is queued). Callers ask
    /// `buildid_cache_lockless_vma_enabled()` first, once for a batch of lookups.
    ///
    /// # Safety
    ///
    /// `mm` must have a user (`mm_users`) for the call; `build_id` and `size` as for
    /// `build_id_parse()`; `range` must be valid for writing a `struct buildid_vma_range`.
    #[no_mangle]
    pub unsafe extern "C" fn buildid_cache_vma_lookup(
        mm: *mut bindings::mm_struct,
        addr: c_ulong,
        build_id: *mut c_uchar,
        size: *mut u32,
        range: *mut bindings::buildid_vma_range,
    ) -> c_int {
        // SAFETY: The caller guarantees that `mm` has a user for the call.
        let mm = unsafe { MmWithUser::from_raw(mm) };
        match cache::vma_lookup(mm, addr) {
            Ok((id, vma)) => {
                // SAFETY: The caller guarantees `range` is writable.
                unsafe {
                    range.write(bindings::buildid_vma_range {
                        start: vma.start,
                        end: vma.end,
                        offset: vma.offset,
                    })
                };
                // SAFETY: Forwarded from the caller.
                unsafe { super::store(Ok(id), build_id, size) }
            }
            Err(e) => e.to_errno(),
        }
    }

    /// Fills the cache with `file`'s build ID unless it is cached already; may sleep.
    ///
    /// # Safety
    ///
    /// `file` must be a valid, referenced file for the call, and the caller must be allowed to
    /// sleep and must not hold `mmap_lock`.
    #[no_mangle]
    pub unsafe extern "C" fn buildid_cache_fill_file(file: *mut bindings::file, deferred: bool) {
        // SAFETY: The caller guarantees that `file` is valid and referenced during the call.
        let file = unsafe { File::from_raw_file(file) };
        if file.is_regular() && !cache::contains(file) {
            cache::fill(file, deferred);
        }
    }

    /// Drops the cached build ID of `inode`, counting it as `why`; does not allocate. `inode`
    /// is only used as a key.
    #[no_mangle]
    pub extern "C" fn buildid_cache_forget_inode(
        inode: *mut bindings::inode,
        why: bindings::buildid_cache_stat,
    ) {
        cache::forget(inode as usize, why);
    }

    fn to_errno(result: Result) -> c_int {
        match result {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// Whether the cache is on: its table exists. Any context.
    #[no_mangle]
    pub extern "C" fn buildid_cache_is_enabled() -> bool {
        cache::is_on()
    }

    /// Turns the cache on or off; see [`cache::set_enabled`]. Process context.
    #[no_mangle]
    pub extern "C" fn buildid_cache_set_enabled(on: bool) -> c_int {
        to_errno(cache::set_enabled(on))
    }

    /// Sets the size limit of the cache; see [`cache::set_max_entries`]. Process context.
    #[no_mangle]
    pub extern "C" fn buildid_cache_set_max_entries(max_entries: c_uint) -> c_int {
        let max_entries = usize::try_from(max_entries).unwrap_or(usize::MAX);
        to_errno(cache::set_max_entries(max_entries))
    }

    /// The size limit of the cache. Process context.
    #[no_mangle]
    pub extern "C" fn buildid_cache_max_entries() -> c_uint {
        c_uint::try_from(cache::max_entries()).unwrap_or(c_uint::MAX)
    }

    /// Whether the cache holds an entry for `inode`, valid or not; any context.
    #[no_mangle]
    pub extern "C" fn buildid_cache_has_inode(inode: *const bindings::inode) -> bool {
        cache::has_key(inode as usize)
    }

    /// The number of tasks updating the table at this instant; any context.
    #[no_mangle]
    pub extern "C" fn buildid_cache_updates_in_progress() -> c_uint {
        cache::updates_in_progress()
    }

    /// The number of cached build IDs.
    #[no_mangle]
    pub extern "C" fn buildid_cache_entries() -> c_uint {
        c_uint::try_from(cache::entries()).unwrap_or(c_uint::MAX)
    }
}
