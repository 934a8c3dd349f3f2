// SPDX-License-Identifier: GPL-2.0

//! Inodes (`struct inode`).
//!
//! C headers: [`include/linux/fs.h`](srctree/include/linux/fs.h) and
//! [`include/linux/iversion.h`](srctree/include/linux/iversion.h)

use super::{address_space::AddressSpace, super_block::SuperBlock};
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

impl Inode {
    /// Creates a reference to an [`Inode`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` is valid and stays valid for the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::inode) -> &'a Inode {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `Inode` is
        // `repr(transparent)` over `struct inode`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the inode.
    #[inline]
    pub fn as_ptr(&self) -> *mut bindings::inode {
        self.0.get()
    }

    /// The inode's address, an identity that no other live inode shares.
    #[inline]
    pub fn key(&self) -> usize {
        self.as_ptr() as usize
    }

    /// Whether the inode is a regular file's (`S_ISREG`).
    #[inline]
    pub fn is_regular(&self) -> bool {
        // SAFETY: The inode is valid by the type invariants; the file type bits of `i_mode` are
        // set when the inode is set up and never change.
        let mode = unsafe { (*self.as_ptr()).i_mode };
        u32::from(mode) & bindings::S_IFMT == bindings::S_IFREG
    }

    /// The page cache of the inode's data (`i_mapping`).
    #[inline]
    pub fn mapping(&self) -> &AddressSpace {
        // SAFETY: The inode is valid by the type invariants; `i_mapping` is set when the inode
        // is set up and lives as long as the inode.
        unsafe { AddressSpace::from_raw((*self.as_ptr()).i_mapping) }
    }

    /// The superblock of the file system the inode is on (`i_sb`).
    #[inline]
    pub fn super_block(&self) -> &SuperBlock {
        // SAFETY: The inode is valid by the type invariants, and `i_sb` is set when it is made.
        // What keeps the inode reachable keeps its superblock active: the mount of an open file
        // on it, or the superblock itself while it evicts the inode.
        unsafe { SuperBlock::from_raw((*self.as_ptr()).i_sb) }
    }

    /// Whether the file system maintains the change attribute (`IS_I_VERSION`, `SB_I_VERSION`).
    /// Elsewhere `i_version` holds what the file system stores there (NFS, Ceph and 9p keep a
    /// raw server attribute), which must be neither queried nor compared.
    #[inline]
    pub fn has_iversion(&self) -> bool {
        self.super_block().flags() & bindings::SB_I_VERSION != 0
    }

    /// Whether the inode belongs to an internal mount (`SB_KERNMOUNT`): `shm_mnt` for memfd
    /// and SysV shared memory, hugetlbfs' own mounts, pseudo file systems. Their files are
    /// made with `alloc_file_pseudo()`, opened for write without `get_write_access()`.
    #[inline]
    pub fn on_internal_mount(&self) -> bool {
        self.super_block().flags() & bindings::SB_KERNMOUNT != 0
    }

    /// The change attribute, marked queried so that the next change increments it
    /// (`inode_query_iversion`).
    #[inline]
    pub fn query_iversion(&self) -> u64 {
        // SAFETY: The inode is valid by the type invariants.
        unsafe { bindings::inode_query_iversion(self.as_ptr()) }
    }
}
