// SPDX-License-Identifier: GPL-2.0

//! The page cache of an inode (`struct address_space`).
//!
//! C headers: [`include/linux/fs.h`](srctree/include/linux/fs.h) and
//! [`include/linux/pagemap.h`](srctree/include/linux/pagemap.h)

use crate::{bindings, types::Opaque};

/// The page cache of an inode, borrowed from something that keeps the inode alive (an open
/// file, for example).
///
/// # Invariants
///
/// The address space is valid for as long as the `AddressSpace` is reachable.
#[repr(transparent)]
pub struct AddressSpace(Opaque<bindings::address_space>);

// SAFETY: The methods only do lockless page cache lookups, read fields set at inode creation
// and read atomic counters, which may be done from any thread.
unsafe impl Sync for AddressSpace {}

impl AddressSpace {
    /// Creates a reference to an [`AddressSpace`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` is valid and stays valid for the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::address_space) -> &'a AddressSpace {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `AddressSpace` is
        // `repr(transparent)` over `struct address_space`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the address space.
    #[inline]
    pub fn as_ptr(&self) -> *mut bindings::address_space {
        self.0.get()
    }

    /// Whether this is the mapping of a `memfd_secret` file, whose memory the kernel must not
    /// read.
    #[inline]
    pub fn is_secretmem(&self) -> bool {
        // SAFETY: The address space is valid by the type invariants.
        unsafe { bindings::secretmem_mapping(self.as_ptr()) }
    }

    /// Whether this is the mapping of a shmem (tmpfs) file, whose page cache holds its data.
    #[inline]
    pub fn is_shmem(&self) -> bool {
        // SAFETY: The address space is valid by the type invariants.
        unsafe { bindings::shmem_mapping(self.as_ptr()) }
    }
}
