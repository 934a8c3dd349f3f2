// SPDX-License-Identifier: GPL-2.0

//! Superblocks (`struct super_block`) and file system types (`struct file_system_type`).
//!
//! C header: [`include/linux/fs.h`](srctree/include/linux/fs.h)

use crate::{bindings, ffi::c_ulong, types::Opaque};
use core::ptr::{addr_of, read_volatile};

/// The superblock of a mounted file system, borrowed from an inode on it.
///
/// # Invariants
///
/// The superblock is valid and active (a mount or an open file on it holds it, so its file
/// system type stays registered) for as long as the `SuperBlock` is reachable.
#[repr(transparent)]
pub struct SuperBlock(Opaque<bindings::super_block>);

// SAFETY: The accessors only read `s_type`, which is constant, and `s_flags`, once; both may be
// read from any thread.
unsafe impl Sync for SuperBlock {}

impl SuperBlock {
    /// Creates a reference to a [`SuperBlock`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` points to a valid superblock that stays active for the
    /// lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::super_block) -> &'a SuperBlock {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `SuperBlock` is
        // `repr(transparent)` over `struct super_block`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the superblock.
    #[inline]
    pub fn as_ptr(&self) -> *mut bindings::super_block {
        self.0.get()
    }

    /// The `SB_*` flags, read once: a remount changes them.
    #[inline]
    pub fn flags(&self) -> c_ulong {
        // SAFETY: The superblock is valid by the type invariants; a volatile load of the aligned
        // word is what `READ_ONCE()` does.
        unsafe { read_volatile(addr_of!((*self.as_ptr()).s_flags)) }
    }

    /// The type of the file system mounted here (`s_type`).
    #[inline]
    pub fn fs_type(&self) -> &FileSystemType {
        // SAFETY: The superblock is valid and active by the type invariants; `s_type` is set when
        // the superblock is made, and the file system type stays registered, its module loaded,
        // until the last active reference is dropped (`deactivate_locked_super()`).
        unsafe { FileSystemType::from_raw((*self.as_ptr()).s_type) }
    }
}

/// A file system type, borrowed from one of its active superblocks.
///
/// # Invariants
///
/// The file system type is valid for as long as the `FileSystemType` is reachable.
#[repr(transparent)]
pub struct FileSystemType(Opaque<bindings::file_system_type>);

// SAFETY: The accessors only read `fs_flags`, which is constant, from any thread.
unsafe impl Sync for FileSystemType {}

impl FileSystemType {
    /// Creates a reference to a [`FileSystemType`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` is valid and stays valid for the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::file_system_type) -> &'a FileSystemType {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `FileSystemType` is
        // `repr(transparent)` over `struct file_system_type`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the file system type.
    #[inline]
    pub fn as_ptr(&self) -> *mut bindings::file_system_type {
        self.0.get()
    }

    /// Whether the file system is mounted from a block device (`FS_REQUIRES_DEV`). Cluster file
    /// systems (GFS2, OCFS2) and fuseblk are such file systems too, whose data another node or
    /// the FUSE server may change.
    #[inline]
    pub fn requires_dev(&self) -> bool {
        // SAFETY: The type is valid by the type invariants; `fs_flags` is set at definition and
        // never changes.
        let fs_flags = unsafe { (*self.as_ptr()).fs_flags };
        fs_flags & bindings::FS_REQUIRES_DEV as crate::ffi::c_int != 0
    }
}
