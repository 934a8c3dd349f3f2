// SPDX-License-Identifier: GPL-2.0

//! Inodes (`struct inode`).
//!
//! C headers: [`include/linux/fs.h`](srctree/include/linux/fs.h) and
//! [`include/linux/iversion.h`](srctree/include/linux/iversion.h)

use crate::{bindings, types::Opaque};

/// An inode, borrowed from something that keeps it alive (an open file, for example).
///
/// # Invariants
///
/// The inode is valid for as long as the `Inode` is reachable.
#[repr(transparent)]
pub struct Inode(Opaque<bindings::inode>);

// SAFETY: The accessors only read fields that may be read from any thread.
unsafe impl Sync for Inode {}

/// An inode's change time, as `inode_get_ctime()` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp {
    /// Seconds.
    pub sec: i64,
    /// Nanoseconds.
    pub nsec: i64,
}

impl Inode {
    /// Creates a reference to an [`Inode`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` is valid and stays valid for the lifetime `'a`.
    pub unsafe fn from_raw<'a>(ptr: *const bindings::inode) -> &'a Inode {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `Inode` is
        // `repr(transparent)` over `struct inode`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the inode.
    pub fn as_ptr(&self) -> *mut bindings::inode {
        self.0.get()
    }

    /// The inode's address, an identity that no other live inode shares.
    pub fn key(&self) -> usize {
        self.as_ptr() as usize
    }

    /// The size in bytes (`i_size_read`).
    pub fn size(&self) -> i64 {
        // SAFETY: The inode is valid by the type invariants.
        unsafe { bindings::i_size_read(self.as_ptr()) }
    }

    /// `i_writecount`: positive while the inode is open for write (or truncated), negative
    /// while writes are denied (a running executable).
    pub fn write_count(&self) -> i32 {
        // SAFETY: The inode is valid by the type invariants.
        unsafe { bindings::inode_write_count(self.as_ptr()) }
    }

    /// The change attribute, without marking it queried (`inode_peek_iversion`). Usable in any
    /// context, NMI included.
    pub fn peek_iversion(&self) -> u64 {
        // SAFETY: The inode is valid by the type invariants.
        unsafe { bindings::inode_peek_iversion(self.as_ptr()) }
    }

    /// The change attribute, marked queried so that the next change increments it
    /// (`inode_query_iversion`).
    pub fn query_iversion(&self) -> u64 {
        // SAFETY: The inode is valid by the type invariants.
        unsafe { bindings::inode_query_iversion(self.as_ptr()) }
    }

    /// The change time (`inode_get_ctime`). A concurrent update may be read torn.
    pub fn ctime(&self) -> Timestamp {
        // SAFETY: The inode is valid by the type invariants.
        let ts = unsafe { bindings::inode_get_ctime(self.as_ptr()) };
        Timestamp {
            sec: ts.tv_sec,
            nsec: ts.tv_nsec as i64,
        }
    }
}
