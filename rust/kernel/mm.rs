// SPDX-License-Identifier: GPL-2.0

//! Memory management.
//!
//! C headers: [`include/linux/mm.h`](srctree/include/linux/mm.h),
//! [`include/linux/mm_types.h`](srctree/include/linux/mm_types.h),
//! [`include/linux/sched/mm.h`](srctree/include/linux/sched/mm.h) and
//! [`include/linux/mmap_lock.h`](srctree/include/linux/mmap_lock.h)

use crate::{
    bindings,
    error::{code::*, from_err_ptr, Result},
    task::Task,
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::{marker::PhantomData, ops::Deref, ptr::NonNull};

pub mod virt;
use virt::VmaRef;

/// An address space (`struct mm_struct`) that stays allocated, but whose mappings may already be
/// torn down: a reference on `mm_count`.
///
/// # Invariants
///
/// The `mm_struct` is valid and its `mm_count` is non-zero for as long as the `Mm` is
/// reachable: someone holds an `mm_count` reference (taken with `mmgrab()`) meanwhile.
#[repr(transparent)]
pub struct Mm {
    mm: Opaque<bindings::mm_struct>,
}

// SAFETY: An `mm_count` reference may be dropped by any thread, not only the one that took it.
unsafe impl Send for Mm {}
// SAFETY: The methods taking `&Mm` only use atomic operations and locks of the `mm_struct`.
unsafe impl Sync for Mm {}

// SAFETY: The type invariants guarantee that `Mm` is always reference-counted (`mm_count`).
unsafe impl AlwaysRefCounted for Mm {
    #[inline]
    fn inc_ref(&self) {
        // SAFETY: A shared reference means that `mm_count` is non-zero.
        unsafe { bindings::mmgrab(self.as_raw()) };
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns an `mm_count` reference, which is dropped here.
        unsafe { bindings::mmdrop(obj.cast().as_ptr()) };
    }
}

/// How [`MmWithUser::access`] checks that the current task may access another task's address
/// space: a `PTRACE_MODE_*` combination of `ptrace_may_access()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtraceMode(u32);

impl PtraceMode {
    /// Read access with the file system credentials of the current task: the check of
    /// `/proc/<pid>/maps` and of its `PROCMAP_QUERY` ioctl.
    pub const READ_FSCREDS: Self = Self(bindings::PTRACE_MODE_READ_FSCREDS);
}

/// An address space whose mappings stay in place: a reference on `mm_users`.
///
/// Dropping the last `ARef<MmWithUser>` calls `mmput()`, which may sleep to tear the address
/// space down: drop it only where sleeping is allowed, as C callers of `mmput()` do. As for them,
/// the check is at run time: `mmput()`'s `might_sleep()` reports a drop in atomic context with
/// `CONFIG_DEBUG_ATOMIC_SLEEP`.
///
/// # Invariants
///
/// The `mm_struct` is valid and its `mm_users` is non-zero for as long as the `MmWithUser` is
/// reachable: every `MmWithUser` is reached through a reference taken with `mmget()` (or
/// `mmget_not_zero()`, `mm_access()`).
#[repr(transparent)]
pub struct MmWithUser {
    mm: Mm,
}

// SAFETY: An `mm_users` reference may be dropped by another task than the one that took it:
// `mmput()` only needs a context that may sleep, which is not a matter of threads.
unsafe impl Send for MmWithUser {}
// SAFETY: The methods taking `&MmWithUser` only use atomic operations and locks of the
// `mm_struct`.
unsafe impl Sync for MmWithUser {}

// SAFETY: The type invariants guarantee that `MmWithUser` is always reference-counted
// (`mm_users`).
unsafe impl AlwaysRefCounted for MmWithUser {
    #[inline]
    fn inc_ref(&self) {
        // SAFETY: A shared reference means that `mm_users` is non-zero.
        unsafe { bindings::mmget(self.as_raw()) };
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns an `mm_users` reference, which is dropped here.
        unsafe { bindings::mmput(obj.cast().as_ptr()) };
    }
}

// An `mm_users` reference implies an `mm_count` one: everything an `Mm` offers is there too.
impl Deref for MmWithUser {
    type Target = Mm;

    #[inline]
    fn deref(&self) -> &Mm {
        &self.mm
    }
}

impl Mm {
    /// Creates a reference to an [`Mm`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` points at a valid `mm_struct` whose `mm_count` stays
    /// non-zero for the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::mm_struct) -> &'a Mm {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `Mm` is
        // `repr(transparent)` over `struct mm_struct`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the `mm_struct`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::mm_struct {
        self.mm.get()
    }

    /// Takes an `mm_users` reference, unless the address space has no users left, that is, its
    /// mappings are being or have been torn down.
    #[inline]
    pub fn mmget_not_zero(&self) -> Option<ARef<MmWithUser>> {
        // SAFETY: The `mm_struct` is valid by the type invariants.
        if !unsafe { bindings::mmget_not_zero(self.as_raw()) } {
            return None;
        }
        // SAFETY: `mmget_not_zero()` took an `mm_users` reference, which the `ARef` takes over;
        // `MmWithUser` is `repr(transparent)` over the `mm_struct`.
        Some(unsafe { ARef::from_raw(NonNull::from(self).cast()) })
    }
}

impl MmWithUser {
    /// Creates a reference to an [`MmWithUser`] from a valid pointer.
    ///
    /// # Safety
    ///
    /// The caller must ensure that `ptr` points at a valid `mm_struct` whose `mm_users` stays
    /// non-zero for the lifetime `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::mm_struct) -> &'a MmWithUser {
        // SAFETY: The caller guarantees that the pointer is valid for `'a`; `MmWithUser` is
        // `repr(transparent)` over `struct mm_struct`.
        unsafe { &*ptr.cast() }
    }

    /// The address space of `task`, if the current task may access it in `mode`
    /// (`mm_access()`).
    ///
    /// Fails with [`ESRCH`] for a task without an address space, and with [`EACCES`] (or the
    /// error of the check) when access is denied.
    pub fn access(task: &Task, mode: PtraceMode) -> Result<ARef<MmWithUser>> {
        // SAFETY: `task` is a valid task for the duration of the call.
        let mm = unsafe { bindings::mm_access(task.0.get(), mode.0) };
        // `mm_access` returns NULL for a task without an address space.
        let mm = NonNull::new(from_err_ptr(mm)?).ok_or(ESRCH)?;
        // SAFETY: `mm_access` returned the address space with an `mm_users` reference, which the
        // `ARef` takes over.
        Ok(unsafe { ARef::from_raw(mm.cast()) })
    }

    /// Takes the mmap lock for reading; may sleep.
    #[inline]
    pub fn mmap_read_lock(&self) -> MmapReadGuard<'_> {
        // SAFETY: The `mm_struct` is valid by the type invariants.
        unsafe { bindings::mmap_read_lock(self.as_raw()) };
        // INVARIANT: The lock was just taken for reading.
        MmapReadGuard {
            mm: self,
            _not_send: PhantomData,
        }
    }

    /// Takes the mmap lock for reading, unless a fatal signal interrupts the wait: then
    /// [`EINTR`].
    #[inline]
    pub fn mmap_read_lock_killable(&self) -> Result<MmapReadGuard<'_>> {
        // SAFETY: The `mm_struct` is valid by the type invariants.
        if unsafe { bindings::mmap_read_lock_killable(self.as_raw()) } != 0 {
            return Err(EINTR);
        }
        // INVARIANT: The lock was just taken for reading.
        Ok(MmapReadGuard {
            mm: self,
            _not_send: PhantomData,
        })
    }

    /// Takes the mmap lock for reading if nobody holds it for writing; never sleeps.
    #[inline]
    pub fn mmap_read_trylock(&self) -> Option<MmapReadGuard<'_>> {
        // SAFETY: The `mm_struct` is valid by the type invariants.
        if !unsafe { bindings::mmap_read_trylock(self.as_raw()) } {
            return None;
        }
        // INVARIANT: The lock was just taken for reading.
        Some(MmapReadGuard {
            mm: self,
            _not_send: PhantomData,
        })
    }
}

/// The mmap lock of an address space, held for reading; dropping the guard releases it.
///
/// # Invariants
///
/// The mmap lock of `mm` is held for reading by the task that made the guard.
pub struct MmapReadGuard<'a> {
    mm: &'a MmWithUser,
    /// The lock must be released by the task that took it.
    _not_send: PhantomData<*mut ()>,
}

impl MmapReadGuard<'_> {
    /// The VMA that covers `addr`, if there is one (`vma_lookup()`).
    #[inline]
    pub fn vma_lookup(&self, addr: usize) -> Option<&VmaRef> {
        // SAFETY: The `mm_struct` is valid, and by the type invariants its mmap lock is held,
        // which `vma_lookup()` needs.
        let vma = unsafe { bindings::vma_lookup(self.mm.as_raw(), addr) };
        if vma.is_null() {
            return None;
        }
        // SAFETY: A VMA found under the mmap lock stays valid while the lock is held, and the
        // returned reference borrows the guard, so it cannot outlive the lock.
        Some(unsafe { VmaRef::from_raw(vma) })
    }
}

impl Drop for MmapReadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants this task holds the lock for reading.
        unsafe { bindings::mmap_read_unlock(self.mm.as_raw()) };
    }
}
