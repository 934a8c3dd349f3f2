// SPDX-License-Identifier: GPL-2.0

//! Superblocks (`struct super_block`) and file system types (`struct file_system_type`).
//!
//! C header: [`include/linux/fs.h`](srctree/include/linux/fs.h)

use crate::{bindings, ffi::c_ulong, types::Opaque};
use core::ptr::{addr_of, read_volatile};

/// The superblock of a mounted file system, borrowed from an inode on it (which pins it).
///
/// # Invariants
///
/// The superblock is valid for as long as the `SuperBlock` is reachable.
#[repr(transparent)]
pub struct SuperBlock(Opaque<bindings::super_block>);

// SAFETY: The accessors only read `s_flags` once and fields set when the superblock is made,
// which may be done from any thread.
unsafe impl Sync for SuperBlock {}

impl SuperBlock {
    /// Creates a reference to a [`SuperBlock`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` is valid and stays valid for the lifetime `'a`.
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
        // SAFETY: The superblock is valid by the type invariants; `s_type` is set when the
        // superblock is made, and the module of a file system type stays loaded while it has
        // superblocks.
        unsafe { FileSystemType::from_raw((*self.as_ptr()).s_type) }
    }
}

/// A registered file system type, borrowed from one of its superblocks.
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

    /// Whether the file system is mounted from a block device (`FS_REQUIRES_DEV`). Cluster file
    /// systems (GFS2, OCFS2) and fuseblk are such file systems too, whose data another node or
    /// the FUSE server may change.
    #[inline]
    pub fn requires_dev(&self) -> bool {
        // SAFETY: The type is valid by the type invariants; `fs_flags` is set at definition and
        // never changes.
        let fs_flags = unsafe { (*self.0.get()).fs_flags };
        fs_flags & bindings::FS_REQUIRES_DEV as crate::ffi::c_int != 0
    }
}
