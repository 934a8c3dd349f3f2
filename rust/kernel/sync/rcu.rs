// SPDX-License-Identifier: GPL-2.0

//! RCU support.
//!
//! C header: [`include/linux/rcupdate.h`](srctree/include/linux/rcupdate.h)

use crate::bindings;
use core::{
    marker::PhantomData,
    sync::atomic::{compiler_fence, Ordering},
};

/// Whether `rcu_read_lock()` and `rcu_read_unlock()`, inline functions that Rust can only call
/// through out-of-line helpers, compile to compiler barriers.
///
/// They do without preemptible RCU, a preemption count, lockdep and strict grace periods
/// (`__rcu_read_lock()` is `preempt_disable()`, which is `barrier()` then); [`Guard`] then does
/// the same instead of paying two calls on every lookup of a read-mostly structure.
const READ_SIDE_IS_A_BARRIER: bool = !cfg!(any(
    CONFIG_PREEMPT_RCU,
    CONFIG_PREEMPT_COUNT,
    CONFIG_DEBUG_LOCK_ALLOC,
    CONFIG_PROVE_RCU,
    CONFIG_RCU_STRICT_GRACE_PERIOD
));

/// Evidence that the RCU read side lock is held on the current thread/CPU.
///
/// The type is explicitly not `Send` because this property is per-thread/CPU.
///
/// # Invariants
///
/// The RCU read side lock is actually held while instances of this guard exist.
pub struct Guard(PhantomData<*mut ()>);

impl Guard {
    /// Acquires the RCU read side lock and returns a guard.
    ///
    /// Usable in any context, NMI included.
    #[inline]
    pub fn new() -> Self {
        if READ_SIDE_IS_A_BARRIER {
            compiler_fence(Ordering::SeqCst);
        } else {
            // SAFETY: An FFI call with no additional requirements.
            unsafe { bindings::rcu_read_lock() };
        }
        // INVARIANT: The RCU read side lock was just acquired above.
        Self(PhantomData)
    }

    /// Explicitly releases the RCU read side lock.
    #[inline]
    pub fn unlock(self) {}
}

impl Default for Guard {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        if READ_SIDE_IS_A_BARRIER {
            compiler_fence(Ordering::SeqCst);
        } else {
            // SAFETY: By the type invariants, the RCU read side is locked, so it is ok to unlock
            // it.
            unsafe { bindings::rcu_read_unlock() };
        }
    }
}

/// Acquires the RCU read side lock.
#[inline]
pub fn read_lock() -> Guard {
    Guard::new()
}

/// Waits until every RCU read side critical section that started before the call has ended.
///
/// Sleeps: process context only.
#[inline]
pub fn synchronize_rcu() {
    // SAFETY: An FFI call; the function may sleep, which callers of this function allow.
    unsafe { bindings::synchronize_rcu() };
}
