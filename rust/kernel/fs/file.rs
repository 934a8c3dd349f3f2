// SPDX-License-Identifier: GPL-2.0

//! Open files (`struct file`).
//!
//! C header: [`include/linux/fs.h`](srctree/include/linux/fs.h)

use super::inode::Inode;
use crate::{
    bindings,
    error::{code::*, Error, Result},
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::ptr::NonNull;

/// An open file.
///
/// # Invariants
///
/// The file is valid and its reference count (`f_count`) is non-zero for as long as the `File`
/// is reachable.
#[repr(transparent)]
pub struct File(Opaque<bindings::file>);

// SAFETY: A `struct file` may be referenced, read and released from any thread.
unsafe impl Send for File {}

// SAFETY: All methods taking `&File` are safe to call concurrently from several threads.
unsafe impl Sync for File {}

// SAFETY: The type invariants guarantee that `File` is always reference-counted.
unsafe impl AlwaysRefCounted for File {
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference means that the refcount is non-zero.
        unsafe { bindings::get_file(self.as_ptr()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The safety requirements guarantee that the refcount is non-zero.
        unsafe { bindings::fput(obj.cast().as_ptr()) }
    }
}

impl File {
    /// Creates a reference to a [`File`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` is valid and stays valid, with a non-zero refcount, for
    /// the lifetime `'a`.
    pub unsafe fn from_raw<'a>(ptr: *const bindings::file) -> &'a File {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `File` is
        // `repr(transparent)` over `struct file`.
        unsafe { &*ptr.cast() }
    }

    /// Takes a reference to the file open at `fd` in the current task's file table.
    pub fn fget(fd: u32) -> Result<ARef<Self>> {
        // SAFETY: `fget` may be called with any fd; it returns NULL or a referenced file.
        let ptr = NonNull::new(unsafe { bindings::fget(fd) }).ok_or(EBADF)?;
        // SAFETY: `fget` incremented the refcount, which the `ARef` takes over.
        Ok(unsafe { ARef::from_raw(ptr.cast()) })
    }

    /// Returns a raw pointer to the file.
    pub fn as_ptr(&self) -> *mut bindings::file {
        self.0.get()
    }

    fn inode(&self) -> *mut bindings::inode {
        // SAFETY: The file is valid by the type invariants, and `f_inode` is set at open time
        // and never changes afterwards.
        unsafe { (*self.as_ptr()).f_inode }
    }

    /// The inode that holds the file's data: the file's own, or for a file opened on a union
    /// file system such as overlayfs, the inode of the file system below (`d_real_inode`).
    ///
    /// Finding the inode below may call into the file system, so with `may_call_fs` false this
    /// returns `None` for such a file. A file mapped from overlayfs is a file of the file system
    /// below and needs no such call.
    pub fn data_inode(&self, may_call_fs: bool) -> Option<&Inode> {
        // SAFETY: The file is valid; `f_path` is set at open time and pins its dentry.
        let dentry = unsafe { (*self.as_ptr()).f_path.dentry };
        // SAFETY: `dentry` is pinned by the file; `d_flags` bits for `d_op` are set once, when
        // the dentry is instantiated.
        let real = unsafe { (*dentry).d_flags } & bindings::DCACHE_OP_REAL != 0;
        let inode = match (real, may_call_fs) {
            (false, _) => self.inode(),
            // SAFETY: `dentry` is pinned by the file, and the caller allows calls into the file
            // system.
            (true, true) => unsafe { bindings::d_real_inode(dentry) },
            (true, false) => return None,
        };
        if inode.is_null() {
            return None;
        }
        // SAFETY: The file pins its dentry, and so the dentry's inode and the inode of the file
        // system below, for as long as the borrow of `self` lasts.
        Some(unsafe { Inode::from_raw(inode) })
    }

    /// The `FMODE_*` flags the file was opened with.
    pub fn mode(&self) -> u32 {
        // SAFETY: The file is valid; `f_mode` is only changed at open time.
        unsafe { (*self.as_ptr()).f_mode }
    }

    /// Whether the file is a regular file (`S_ISREG`).
    pub fn is_regular(&self) -> bool {
        // SAFETY: `f_inode` of a valid file is a valid inode whose `i_mode` file type bits never
        // change.
        let mode = unsafe { (*self.inode()).i_mode };
        u32::from(mode) & bindings::S_IFMT == bindings::S_IFREG
    }

    /// The file's size in bytes (`i_size_read`).
    pub fn size(&self) -> i64 {
        // SAFETY: `f_inode` of a valid file is a valid inode.
        unsafe { bindings::i_size_read(self.inode()) }
    }

    /// The address space caching the file's data (`f_mapping`).
    pub fn mapping(&self) -> *mut bindings::address_space {
        // SAFETY: The file is valid; `f_mapping` is set at open time.
        unsafe { (*self.as_ptr()).f_mapping }
    }

    /// Whether the file is a `memfd_secret` file, whose memory the kernel must not read.
    pub fn is_secretmem(&self) -> bool {
        // SAFETY: `f_mapping` of a valid file is a valid address space.
        unsafe { bindings::secretmem_mapping(self.mapping()) }
    }

    /// Reads into `buf` from file position `pos` (`__kernel_read`); may sleep.
    ///
    /// Returns the number of bytes read, which is less than `buf.len()` at end of file.
    pub fn kernel_read(&self, buf: &mut [u8], pos: i64) -> Result<usize> {
        let mut pos = pos;
        // SAFETY: The file is valid, `buf` is valid for writing `buf.len()` bytes, and `pos`
        // is a valid `loff_t` for the duration of the call.
        let ret = unsafe {
            bindings::__kernel_read(self.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut pos)
        };
        if ret < 0 {
            // `ret` is a negative errno, which fits in `c_int`.
            return Err(Error::from_errno(ret as crate::ffi::c_int));
        }
        // `ret` is non-negative and at most `buf.len()`.
        Ok(ret as usize)
    }
}
