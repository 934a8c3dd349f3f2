// SPDX-License-Identifier: GPL-2.0

//! Miscellaneous character devices: `/dev/<name>` with a dynamic minor number.
//!
//! C header: [`include/linux/miscdevice.h`](srctree/include/linux/miscdevice.h)

use crate::{
    bindings,
    error::{to_result, Error, Result},
    fs::file::File,
    init::{self, PinInit},
    str::CStr,
    types::Opaque,
    ThisModule,
};
use core::marker::PhantomData;

/// The file operations of a misc device.
///
/// There is no per-open state: each call gets the open file of the device.
pub trait MiscDevice {
    /// Handles `ioctl(2)` on an open file of the device; the result is returned to user space.
    fn ioctl(file: &File, cmd: u32, arg: usize) -> Result<isize>;
}

/// A registered misc device.
///
/// # Invariants
///
/// `misc` is registered with `misc_register()` and points to `fops`; both live, pinned, until
/// `drop` deregisters the device.
#[repr(C)]
pub struct Registration<T: MiscDevice> {
    fops: Opaque<bindings::file_operations>,
    misc: Opaque<bindings::miscdevice>,
    _ops: PhantomData<T>,
}

// SAFETY: The registration is only changed by `misc_register` and `misc_deregister`, which may
// be called from any thread.
unsafe impl<T: MiscDevice> Send for Registration<T> {}

// SAFETY: `&Registration` gives no access to anything.
unsafe impl<T: MiscDevice> Sync for Registration<T> {}

impl<T: MiscDevice> Registration<T> {
    /// Registers `/dev/<name>` with permissions `mode`; `module` owns the file operations, so it
    /// cannot be unloaded while a file of the device is open.
    pub fn register(
        name: &'static CStr,
        mode: u16,
        module: &'static ThisModule,
    ) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and pinned; `Opaque` fields may be written
            // through their raw pointers.
            let (fops, misc) = unsafe {
                (
                    Opaque::raw_get(core::ptr::addr_of!((*slot).fops)),
                    Opaque::raw_get(core::ptr::addr_of!((*slot).misc)),
                )
            };
            // SAFETY: Both structs are plain C data for which all-zero is "no operation" and
            // "not registered"; the writes initialize memory we own.
            unsafe {
                fops.write(bindings::file_operations {
                    owner: module.as_ptr(),
                    unlocked_ioctl: Some(ioctl::<T>),
                    ..core::mem::zeroed()
                });
                misc.write(bindings::miscdevice {
                    minor: bindings::MISC_DYNAMIC_MINOR as _,
                    name: name.as_char_ptr(),
                    fops,
                    mode,
                    ..core::mem::zeroed()
                });
            }
            // SAFETY: `misc` is initialized and pinned; on success it stays registered until
            // `drop` deregisters it.
            to_result(unsafe { bindings::misc_register(misc) })
        };
        // SAFETY: On success `init` initialized every field (`_ops` is a ZST); on failure the
        // device was not registered and nothing needs to be dropped.
        unsafe { init::pin_init_from_closure(init) }
    }
}

impl<T: MiscDevice> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariants the device is registered.
        unsafe { bindings::misc_deregister(self.misc.get()) };
    }
}

/// # Safety
///
/// Only called by the VFS, with a file of this device that is open for the whole call.
unsafe extern "C" fn ioctl<T: MiscDevice>(
    file: *mut bindings::file,
    cmd: u32,
    arg: usize,
) -> isize {
    // SAFETY: The VFS holds the file open during the call.
    let file = unsafe { File::from_raw(file) };
    match T::ioctl(file, cmd, arg) {
        Ok(ret) => ret,
        Err(err) => err.to_errno() as isize,
    }
}
