// SPDX-License-Identifier: GPL-2.0

//! The address space of another process, looked up the way `/proc/<pid>/maps` does.
//!
//! C headers: [`include/linux/sched/mm.h`](srctree/include/linux/sched/mm.h),
//! [`include/linux/mmap_lock.h`](srctree/include/linux/mmap_lock.h)

use crate::{
    bindings,
    error::{code::*, from_err_ptr, Result},
    fs::file::File,
    types::ARef,
};
use core::ptr::NonNull;

/// A user of a process' address space: an `mm_users` reference.
///
/// # Invariants
///
/// `self.0` points to a `struct mm_struct` on which this object owns an `mm_users` reference,
/// taken by `mm_access()` and dropped by `mmput()`.
pub struct MmUser(NonNull<bindings::mm_struct>);

// SAFETY: An `mm_users` reference may be used and dropped from any task.
unsafe impl Send for MmUser {}

// SAFETY: All methods taking `&MmUser` only take the mmap lock for reading.
unsafe impl Sync for MmUser {}

/// The file mapped by a VMA, with the VMA's range and page offset at the time of the lookup.
pub struct VmaFile {
    /// The mapped file, referenced: it stays valid after the mmap lock is dropped.
    pub file: ARef<File>,
    /// First address of the VMA.
    pub start: u64,
    /// First address past the VMA.
    pub end: u64,
    /// Offset in the file, in pages, of `start`.
    pub pgoff: u64,
}

impl MmUser {
    /// The address space of process `pid`, if the current task may read it with the check of
    /// `/proc/<pid>/maps` (`PTRACE_MODE_READ_FSCREDS`).
    ///
    /// Fails with `ESRCH` for a missing process or one without an address space, and with
    /// `EACCES` (or the error of the check) when access is denied.
    pub fn access(pid: i32) -> Result<Self> {
        // SAFETY: `find_get_pid` may be called with any number; it returns a reference or NULL.
        let pid_ref = unsafe { bindings::find_get_pid(pid) };
        if pid_ref.is_null() {
            return Err(ESRCH);
        }
        // SAFETY: `pid_ref` is a valid `struct pid` that we hold a reference on.
        let task = unsafe { bindings::get_pid_task(pid_ref, bindings::pid_type_PIDTYPE_PID) };
        // SAFETY: Drops the reference `find_get_pid` took.
        unsafe { bindings::put_pid(pid_ref) };
        if task.is_null() {
            return Err(ESRCH);
        }
        // SAFETY: `task` is a valid task that we hold a reference on.
        let mm = unsafe { Self::from_task(task) };
        // SAFETY: Drops the reference `get_pid_task` took.
        unsafe { bindings::put_task_struct(task) };
        mm
    }

    /// The address space of the current process.
    pub fn current() -> Result<Self> {
        // SAFETY: The current task is valid for the duration of the call.
        unsafe { Self::from_task(bindings::get_current()) }
    }

    /// # Safety
    ///
    /// `task` must be a valid task for the duration of the call.
    unsafe fn from_task(task: *mut bindings::task_struct) -> Result<Self> {
        // SAFETY: The caller guarantees that `task` is valid.
        let mm = unsafe { bindings::mm_access(task, bindings::PTRACE_MODE_READ_FSCREDS) };
        // `mm_access` returns NULL for a task without an address space.
        let mm = NonNull::new(from_err_ptr(mm)?).ok_or(ESRCH)?;
        // INVARIANT: `mm_access` returned the address space with an `mm_users` reference.
        Ok(Self(mm))
    }

    /// The file mapped at `addr`, or `ENOENT` when no VMA covers `addr` or it maps no file.
    ///
    /// The mmap lock is held for the lookup only; the file is returned referenced.
    pub fn file_at(&self, addr: u64) -> Result<VmaFile> {
        let mm = self.0.as_ptr();
        let addr = usize::try_from(addr).map_err(|_| ENOENT)?;
        // SAFETY: `mm` is valid by the type invariants.
        if unsafe { bindings::mmap_read_lock_killable(mm) } != 0 {
            return Err(EINTR);
        }
        // SAFETY: The mmap lock is held for reading.
        let vma = unsafe { bindings::find_vma(mm, addr as _) };
        let found = if vma.is_null() {
            None
        } else {
            // SAFETY: The VMA and its fields are stable while the mmap lock is held.
            let (start, end, pgoff, file) = unsafe {
                let range = (*vma).__bindgen_anon_1.__bindgen_anon_1;
                (
                    range.vm_start,
                    range.vm_end,
                    (*vma).vm_pgoff,
                    (*vma).vm_file,
                )
            };
            // `find_vma` returns the first VMA ending above `addr`, which may start above it.
            if start <= addr as _ && !file.is_null() {
                // SAFETY: The VMA holds a reference on its file while the mmap lock is held;
                // `ARef::from` takes one of our own.
                let file: ARef<File> = ARef::from(unsafe { File::from_raw(file) });
                Some(VmaFile {
                    file,
                    start: start as u64,
                    end: end as u64,
                    pgoff: pgoff as u64,
                })
            } else {
                None
            }
        };
        // SAFETY: Taken above.
        unsafe { bindings::mmap_read_unlock(mm) };
        found.ok_or(ENOENT)
    }
}

impl Drop for MmUser {
    fn drop(&mut self) {
        // SAFETY: By the type invariants we own an `mm_users` reference.
        unsafe { bindings::mmput(self.0.as_ptr()) };
    }
}
