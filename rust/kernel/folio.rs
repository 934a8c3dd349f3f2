// SPDX-License-Identifier: GPL-2.0

//! Folios of the page cache.
//!
//! C header: [`include/linux/pagemap.h`](srctree/include/linux/pagemap.h)

use crate::{
    bindings,
    error::{code::*, from_err_ptr, Result},
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::ptr::NonNull;

/// A folio: a physically contiguous, naturally aligned set of pages.
///
/// Instances of this type are always reference-counted, that is, a call to `folio_get` ensures
/// that the allocation remains valid at least until the matching call to `folio_put`.
///
/// Page-cache memory can be changed at any time by a writer of the file, so this type never
/// hands out references to the folio's contents: data is copied out by value.
///
/// # Invariants
///
/// The folio is valid and its reference count is non-zero for as long as the `Folio` is
/// reachable.
#[repr(transparent)]
pub struct Folio(Opaque<bindings::folio>);

// SAFETY: The refcount of a folio may be taken and dropped from any thread, and `Folio` only
// exposes operations that are safe to call concurrently.
unsafe impl Send for Folio {}

// SAFETY: All methods taking `&Folio` are safe to call from several threads at once.
unsafe impl Sync for Folio {}

// SAFETY: The type invariants guarantee that `Folio` is always reference-counted.
unsafe impl AlwaysRefCounted for Folio {
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference means that the refcount is non-zero.
        unsafe { bindings::folio_get(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The safety requirements guarantee that the refcount is non-zero.
        unsafe { bindings::folio_put(obj.cast().as_ptr()) }
    }
}

impl Folio {
    /// Looks up the folio caching `index` of `mapping` without sleeping.
    ///
    /// Returns `None` when no folio caches that index. The folio may not be uptodate: check
    /// [`Folio::is_uptodate`] before reading it.
    ///
    /// # Safety
    ///
    /// `mapping` must point to a valid `struct address_space` for the duration of the call.
    pub unsafe fn lookup(
        mapping: *mut bindings::address_space,
        index: usize,
    ) -> Option<ARef<Self>> {
        // SAFETY: The caller guarantees that `mapping` is valid. `filemap_get_folio` does a
        // lockless page cache lookup that neither sleeps nor takes a sleeping lock.
        let folio = unsafe { bindings::filemap_get_folio(mapping, index) };
        let folio = from_err_ptr(folio).ok()?;
        let folio = NonNull::new(folio)?;
        // SAFETY: `filemap_get_folio` returned a folio with its refcount incremented, which the
        // new `ARef` takes over.
        Some(unsafe { ARef::from_raw(folio.cast()) })
    }

    /// Returns a raw pointer to the folio.
    pub fn as_raw(&self) -> *mut bindings::folio {
        self.0.get()
    }

    /// The number of bytes in the folio.
    pub fn size(&self) -> usize {
        // SAFETY: The folio is valid by the type invariants.
        unsafe { bindings::folio_size(self.as_raw()) }
    }

    /// The byte position of the folio in its file.
    pub fn pos(&self) -> i64 {
        // SAFETY: The folio is valid by the type invariants.
        unsafe { bindings::folio_pos(self.as_raw()) }
    }

    /// Whether the folio's contents match the file (read completed, no I/O error).
    pub fn is_uptodate(&self) -> bool {
        // SAFETY: The folio is valid by the type invariants.
        unsafe { bindings::folio_test_uptodate(self.as_raw()) }
    }

    /// Copies `dst.len()` bytes starting at `offset` within the folio into `dst`.
    ///
    /// Returns [`EINVAL`] if the range is not inside the folio. Never sleeps: C's
    /// `memcpy_from_folio()` maps the pages one at a time with `kmap_local_folio`, which is
    /// allowed in any context.
    ///
    /// A concurrent writer may change the data while it is copied; the copy is done by C on a
    /// transient mapping, like every other kernel reader of the page cache, and Rust code only
    /// ever sees the bytes in `dst`.
    pub fn copy_to_slice(&self, offset: usize, dst: &mut [u8]) -> Result {
        let end = offset.checked_add(dst.len()).ok_or(EINVAL)?;
        if end > self.size() {
            return Err(EINVAL);
        }
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: The folio is valid by the type invariants, `offset..end` lies inside it
        // (checked above), and `dst` is valid for writing `dst.len()` bytes.
        unsafe {
            bindings::memcpy_from_folio(dst.as_mut_ptr().cast(), self.as_raw(), offset, dst.len())
        };
        Ok(())
    }
}
