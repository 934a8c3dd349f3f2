// SPDX-License-Identifier: GPL-2.0

//! Inodes (`struct inode`).
//!
//! C headers: [`include/linux/fs.h`](srctree/include/linux/fs.h) and
//! [`include/linux/iversion.h`](srctree/include/linux/iversion.h)

use crate::{bindings, types::Opaque};
#[cfg(CONFIG_64BIT)]
use core::{
    ptr::addr_of_mut,
    sync::atomic::{AtomicI32, AtomicI64, AtomicU32, Ordering},
};

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
        // On 64-bit, `i_size_read()` is an acquire load, inlined here: the build ID cache's
        // lookups read it on every hit.
        #[cfg(CONFIG_64BIT)]
        {
            // SAFETY: The inode is valid by the type invariants, and `i_size` is aligned and
            // only written with `i_size_write()`, a release store on 64-bit.
            unsafe { AtomicI64::from_ptr(addr_of_mut!((*self.as_ptr()).i_size)) }
                .load(Ordering::Acquire)
        }
        #[cfg(not(CONFIG_64BIT))]
        {
            // SAFETY: The inode is valid by the type invariants.
            unsafe { bindings::i_size_read(self.as_ptr()) }
        }
    }

    /// `i_writecount`: positive while the inode is open for write (or truncated), negative
    /// while writes are denied (a running executable).
    pub fn write_count(&self) -> i32 {
        #[cfg(CONFIG_64BIT)]
        {
            // SAFETY: The inode is valid by the type invariants; `i_writecount` is an
            // `atomic_t`, whose `atomic_read()` is a relaxed load.
            unsafe { AtomicI32::from_ptr(addr_of_mut!((*self.as_ptr()).i_writecount.counter)) }
                .load(Ordering::Relaxed)
        }
        #[cfg(not(CONFIG_64BIT))]
        {
            // SAFETY: The inode is valid by the type invariants.
            unsafe { bindings::inode_write_count(self.as_ptr()) }
        }
    }

    /// The change attribute, without marking it queried (`inode_peek_iversion`). Usable in any
    /// context, NMI included.
    pub fn peek_iversion(&self) -> u64 {
        #[cfg(CONFIG_64BIT)]
        {
            // SAFETY: The inode is valid by the type invariants; `i_version` is an
            // `atomic64_t`, whose `atomic64_read()` is a relaxed load on 64-bit.
            let raw =
                unsafe { AtomicI64::from_ptr(addr_of_mut!((*self.as_ptr()).i_version.counter)) }
                    .load(Ordering::Relaxed);
            // Bit 0 is the "queried" flag (`I_VERSION_QUERIED`).
            (raw as u64) >> 1
        }
        #[cfg(not(CONFIG_64BIT))]
        {
            // SAFETY: The inode is valid by the type invariants.
            unsafe { bindings::inode_peek_iversion(self.as_ptr()) }
        }
    }

    /// The change attribute, marked queried so that the next change increments it
    /// (`inode_query_iversion`).
    pub fn query_iversion(&self) -> u64 {
        // SAFETY: The inode is valid by the type invariants.
        unsafe { bindings::inode_query_iversion(self.as_ptr()) }
    }

    /// The change time (`inode_get_ctime`). A concurrent update may be read torn.
    pub fn ctime(&self) -> Timestamp {
        #[cfg(CONFIG_64BIT)]
        {
            let inode = self.as_ptr();
            // SAFETY: The inode is valid by the type invariants. `inode_get_ctime()` reads the
            // two fields with plain loads; relaxed atomic loads of the aligned fields are the
            // same instructions without a data race.
            let (sec, nsec) = unsafe {
                (
                    AtomicI64::from_ptr(addr_of_mut!((*inode).i_ctime_sec)).load(Ordering::Relaxed),
                    AtomicU32::from_ptr(addr_of_mut!((*inode).i_ctime_nsec))
                        .load(Ordering::Relaxed),
                )
            };
            Timestamp {
                sec,
                nsec: nsec.into(),
            }
        }
        #[cfg(not(CONFIG_64BIT))]
        {
            // SAFETY: The inode is valid by the type invariants.
            let ts = unsafe { bindings::inode_get_ctime(self.as_ptr()) };
            Timestamp {
                sec: ts.tv_sec,
                nsec: ts.tv_nsec as i64,
            }
        }
    }
}
