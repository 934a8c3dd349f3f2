// SPDX-License-Identifier: GPL-2.0

//! Virtual memory areas (`struct vm_area_struct`).
//!
//! C header: [`include/linux/mm_types.h`](srctree/include/linux/mm_types.h)

use crate::{bindings, fs::file::File, types::Opaque};

/// A virtual memory area, looked at under the mmap lock (or the VMA's own read lock).
///
/// # Invariants
///
/// The VMA is valid, and one of the locks that keep it from changing or going away is held, for
/// as long as the `VmaRef` is reachable.
#[repr(transparent)]
pub struct VmaRef {
    vma: Opaque<bindings::vm_area_struct>,
}

impl VmaRef {
    /// Creates a reference to a [`VmaRef`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `vma` is valid, and that the mmap lock (or the VMA's read lock)
    /// is held for the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(vma: *const bindings::vm_area_struct) -> &'a Self {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `VmaRef` is
        // `repr(transparent)` over `struct vm_area_struct`.
        unsafe { &*vma.cast() }
    }

    /// Returns a raw pointer to the VMA.
    #[inline]
    pub fn as_ptr(&self) -> *mut bindings::vm_area_struct {
        self.vma.get()
    }

    /// The first address of the VMA.
    #[inline]
    pub fn start(&self) -> usize {
        // SAFETY: The VMA is valid by the type invariants; its range only changes under the
        // mmap lock held for writing.
        unsafe { (*self.as_ptr()).__bindgen_anon_1.__bindgen_anon_1.vm_start }
    }

    /// The first address past the VMA.
    #[inline]
    pub fn end(&self) -> usize {
        // SAFETY: As for `start`.
        unsafe { (*self.as_ptr()).__bindgen_anon_1.__bindgen_anon_1.vm_end }
    }

    /// The offset in the mapped file, in pages, of [`VmaRef::start`] (`vm_pgoff`).
    #[inline]
    pub fn pgoff(&self) -> usize {
        // SAFETY: As for `start`.
        unsafe { (*self.as_ptr()).vm_pgoff }
    }

    /// The file the VMA maps, or `None` for an anonymous mapping.
    #[inline]
    pub fn vm_file(&self) -> Option<&File> {
        // SAFETY: The VMA is valid by the type invariants; `vm_file` only changes under the mmap
        // lock held for writing.
        let file = unsafe { (*self.as_ptr()).vm_file };
        if file.is_null() {
            return None;
        }
        // SAFETY: The VMA holds its own reference on its file, which it keeps while the lock held
        // by the type invariants keeps the VMA, so the file is valid for as long as `self` is
        // borrowed; nothing done through a `File` needs the position lock of `fdget_pos()`.
        Some(unsafe { File::from_raw_file(file) })
    }
}
