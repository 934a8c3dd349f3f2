// SPDX-License-Identifier: GPL-2.0

//! Open files (`struct file`).
//!
//! C header: [`include/linux/fs.h`](srctree/include/linux/fs.h)

use super::{address_space::AddressSpace, inode::Inode};
use crate::{
    bindings,
    error::{code::*, Error, Result},
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::ptr::{addr_of, read_volatile, NonNull};

/// The `FMODE_*` bits of [`LocalFile::mode`].
pub mod fmode {
    use crate::bindings;

    /// The file is open for reading.
    pub const FMODE_READ: u32 = bindings::FMODE_READ;

    /// The file has a method that reads it (`read` or `read_iter`).
    pub const FMODE_CAN_READ: u32 = bindings::FMODE_CAN_READ;
}

/// An open file that may be shared between threads.
///
/// Every method is on [`LocalFile`], which this dereferences to. A `File` may be sent to
/// another thread: nothing done through it relies on the file position lock of
/// `fdget_pos()`.
///
/// # Invariants
///
/// The file is valid and its reference count (`f_count`) is non-zero for as long as the `File`
/// is reachable.
#[repr(transparent)]
pub struct File {
    inner: Opaque<bindings::file>,
}

// SAFETY: A `struct file` may be referenced, read and released from any thread, and `File` has
// no method that needs the file position lock of `fdget_pos()`.
unsafe impl Send for File {}

// SAFETY: All methods taking `&File` are safe to call concurrently from several threads.
unsafe impl Sync for File {}

// SAFETY: The type invariants guarantee that `File` is always reference-counted.
unsafe impl AlwaysRefCounted for File {
    #[inline]
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference means that the refcount is non-zero.
        unsafe { bindings::get_file(self.as_ptr()) };
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<File>) {
        // SAFETY: The safety requirements guarantee that the refcount is non-zero.
        unsafe { bindings::fput(obj.cast().as_ptr()) }
    }
}

impl File {
    /// Creates a reference to a [`File`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` points at a valid file and that its refcount does not
    /// reach zero during the lifetime `'a`, and that no thread uses the file position lock of
    /// `fdget_pos()` on it while the returned reference may be sent to another thread.
    #[inline]
    pub unsafe fn from_raw_file<'a>(ptr: *const bindings::file) -> &'a File {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `File` is
        // `repr(transparent)` over `struct file`.
        unsafe { &*ptr.cast() }
    }
}

impl core::ops::Deref for File {
    type Target = LocalFile;

    #[inline]
    fn deref(&self) -> &LocalFile {
        // SAFETY: `File` and `LocalFile` are both `repr(transparent)` over `struct file`, and a
        // `File` meets every requirement of a `LocalFile`.
        unsafe { LocalFile::from_raw_file(self.inner.get()) }
    }
}

/// An open file that must stay on the thread that got it: it may be in use under the file
/// position lock of `fdget_pos()` by that thread, which sending it elsewhere would break.
///
/// # Invariants
///
/// The file is valid and its reference count (`f_count`) is non-zero for as long as the
/// `LocalFile` is reachable.
#[repr(transparent)]
pub struct LocalFile {
    inner: Opaque<bindings::file>,
}

// SAFETY: The type invariants guarantee that `LocalFile` is always reference-counted.
unsafe impl AlwaysRefCounted for LocalFile {
    #[inline]
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference means that the refcount is non-zero.
        unsafe { bindings::get_file(self.as_ptr()) };
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<LocalFile>) {
        // SAFETY: The safety requirements guarantee that the refcount is non-zero.
        unsafe { bindings::fput(obj.cast().as_ptr()) }
    }
}

/// The error of [`LocalFile::fget`]: no file is open at that descriptor.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BadFdError;

impl core::fmt::Debug for BadFdError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // What the error turns into.
        f.pad("EBADF")
    }
}

impl From<BadFdError> for Error {
    #[inline]
    fn from(_: BadFdError) -> Error {
        EBADF
    }
}

impl LocalFile {
    /// Takes a reference to the file open at `fd` in the current task's file table.
    #[inline]
    pub fn fget(fd: u32) -> Result<ARef<LocalFile>, BadFdError> {
        // SAFETY: `fget` may be called with any fd; it returns NULL or a referenced file.
        let ptr = NonNull::new(unsafe { bindings::fget(fd) }).ok_or(BadFdError)?;
        // SAFETY: `fget` incremented the refcount, which the `ARef` takes over.
        Ok(unsafe { ARef::from_raw(ptr.cast()) })
    }

    /// Creates a reference to a [`LocalFile`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` points at a valid file and that its refcount does not
    /// reach zero during the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw_file<'a>(ptr: *const bindings::file) -> &'a LocalFile {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `LocalFile` is
        // `repr(transparent)` over `struct file`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the file.
    #[inline]
    pub fn as_ptr(&self) -> *mut bindings::file {
        self.inner.get()
    }

    #[inline]
    fn inode_ptr(&self) -> *mut bindings::inode {
        // SAFETY: The file is valid by the type invariants, and `f_inode` is set at open time
        // and never changes afterwards.
        unsafe { (*self.as_ptr()).f_inode }
    }

    /// The file's inode (`file_inode()`).
    #[inline]
    pub fn inode(&self) -> &Inode {
        // SAFETY: The file pins its inode for as long as the borrow of `self` lasts.
        unsafe { Inode::from_raw(self.inode_ptr()) }
    }

    /// The inode that holds the file's data: the file's own, or for a file opened on a union
    /// file system such as overlayfs, the inode of the file system below (`d_real_inode`), which
    /// may call into the file system.
    #[inline]
    pub fn data_inode(&self) -> Option<&Inode> {
        self.find_data_inode(true)
    }

    /// [`data_inode`](Self::data_inode) without calling into the file system, for any context:
    /// `None` for a file opened on a union file system. A file mapped from overlayfs is a file
    /// of the file system below and needs no such call.
    #[inline]
    pub fn data_inode_nofault(&self) -> Option<&Inode> {
        self.find_data_inode(false)
    }

    #[inline(always)]
    fn find_data_inode(&self, may_call_fs: bool) -> Option<&Inode> {
        // SAFETY: The file is valid; `f_path` is set at open time and pins its dentry.
        let dentry = unsafe { (*self.as_ptr()).f_path.dentry };
        // SAFETY: `dentry` is pinned by the file. Other bits of `d_flags` change under
        // `d_lock`, so the word is loaded once with a volatile load (`READ_ONCE()`); the bits for
        // `d_op` are set once, when the dentry is instantiated.
        let d_flags = unsafe { read_volatile(addr_of!((*dentry).d_flags)) };
        let real = d_flags & bindings::DCACHE_OP_REAL != 0;
        let inode = match (real, may_call_fs) {
            (false, _) => self.inode_ptr(),
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

    /// The `FMODE_*` flags the file was opened with (see [`fmode`]).
    #[inline]
    pub fn mode(&self) -> u32 {
        // SAFETY: The file is valid; `f_mode` is only changed at open time.
        unsafe { (*self.as_ptr()).f_mode }
    }

    /// The `O_*` flags of the file (`f_flags`), read once: `fcntl(F_SETFL)` changes some of
    /// them, `O_DIRECT` among them, at any time.
    #[inline]
    pub fn flags(&self) -> u32 {
        // SAFETY: The file is valid; a volatile load of the aligned word is what `READ_ONCE()`
        // does.
        unsafe { read_volatile(addr_of!((*self.as_ptr()).f_flags)) }
    }

    /// Whether the file is a regular file (`S_ISREG`).
    #[inline]
    pub fn is_regular(&self) -> bool {
        self.inode().is_regular()
    }

    /// The file's size in bytes (`i_size_read`).
    #[inline]
    pub fn size(&self) -> i64 {
        // SAFETY: `f_inode` of a valid file is a valid inode.
        unsafe { bindings::i_size_read(self.inode_ptr()) }
    }

    /// The address space caching the file's data (`f_mapping`).
    #[inline]
    pub fn mapping(&self) -> &AddressSpace {
        // SAFETY: The file is valid; `f_mapping` is set at open time, and the file keeps its
        // inode, and so the address space, alive for as long as the borrow of `self` lasts.
        unsafe { AddressSpace::from_raw((*self.as_ptr()).f_mapping) }
    }

    /// Whether the file is a `memfd_secret` file, whose memory the kernel must not read.
    #[inline]
    pub fn is_secretmem(&self) -> bool {
        self.mapping().is_secretmem()
    }

    /// Reads into `buf` from file position `pos` with `kernel_read()`, which first checks the
    /// position and the permission hooks as `read(2)` does (`rw_verify_area()`); may sleep.
    ///
    /// Returns the number of bytes read, which is less than `buf.len()` at end of file.
    #[inline]
    pub fn kernel_read(&self, buf: &mut [u8], pos: i64) -> Result<usize> {
        let mut pos = pos;
        // SAFETY: The file is valid, `buf` is valid for writing `buf.len()` bytes, and `pos` is a
        // valid `loff_t` for the duration of the call.
        let ret = unsafe {
            bindings::kernel_read(self.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut pos)
        };
        if ret < 0 {
            // `ret` is a negative errno, which fits in `c_int`.
            return Err(Error::from_errno(ret as crate::ffi::c_int));
        }
        // `ret` is non-negative and at most `buf.len()`.
        Ok(ret as usize)
    }
}
