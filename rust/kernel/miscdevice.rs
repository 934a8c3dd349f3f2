// SPDX-License-Identifier: GPL-2.0

//! Miscellaneous character devices: `/dev/<name>` with a dynamic minor number.
//!
//! C header: [`include/linux/miscdevice.h`](srctree/include/linux/miscdevice.h)

use crate::{
    bindings,
    error::{to_result, Error, Result, VTABLE_DEFAULT_ERROR},
    ffi::{c_int, c_long, c_uint, c_ulong},
    fs::file::File,
    init::{self, PinInit},
    str::CStr,
    types::{ForeignOwnable, Opaque},
    ThisModule,
};
use core::{marker::PhantomData, mem::MaybeUninit, pin::Pin};
use macros::{pin_data, pinned_drop, vtable};

/// What a misc device is registered with.
#[derive(Clone, Copy)]
pub struct MiscDeviceOptions {
    /// The name of the device: `/dev/<name>`.
    pub name: &'static CStr,
}

impl MiscDeviceOptions {
    /// The `struct miscdevice` of these options, with the node permissions `mode` and the
    /// operations `fops`.
    fn to_raw_with(
        self,
        mode: u16,
        fops: *const bindings::file_operations,
    ) -> bindings::miscdevice {
        // SAFETY: All zeroes is a valid `struct miscdevice`: no name, no operations, not
        // registered.
        let mut raw: bindings::miscdevice = unsafe { MaybeUninit::zeroed().assume_init() };
        raw.minor = bindings::MISC_DYNAMIC_MINOR as _;
        raw.name = self.name.as_char_ptr();
        raw.fops = fops;
        raw.mode = mode;
        raw
    }
}

/// The `file_operations` of a [`MiscDevice`] `T`, owned by the module that implements it: an
/// open file of the device keeps that module loaded.
///
/// The VFS keeps a pointer to the operations in every open file and reads them until the last
/// reference to the file is gone, which may be after the device was deregistered: they must be
/// `'static`, in the module's own memory. A driver makes them a `static`:
///
/// ```ignore
/// static FOPS: MiscDeviceFops<MyDevice> = MiscDeviceFops::new(&THIS_MODULE);
/// ```
pub struct MiscDeviceFops<T> {
    fops: bindings::file_operations,
    _t: PhantomData<T>,
}

// SAFETY: The operations are never changed after they are built, so they may be read from any
// thread.
unsafe impl<T> Sync for MiscDeviceFops<T> {}

impl<T: MiscDevice> MiscDeviceFops<T> {
    /// The operations of `T`, with `owner` as the module the VFS pins while a file is open.
    pub const fn new(owner: &'static ThisModule) -> Self {
        Self {
            fops: bindings::file_operations {
                owner: owner.as_ptr(),
                ..MiscdeviceVTable::<T>::VTABLE
            },
            _t: PhantomData,
        }
    }
}

/// A registered misc device: `/dev/<name>` exists from [`Self::register_with_fops`] until the
/// registration is dropped.
///
/// # Invariants
///
/// `inner` is registered with `misc_register()`, and its `fops` points at `'static` operations
/// of `T`; `inner` stays pinned until `drop` deregisters the device.
#[repr(transparent)]
#[pin_data(PinnedDrop)]
pub struct MiscDeviceRegistration<T> {
    #[pin]
    inner: Opaque<bindings::miscdevice>,
    _t: PhantomData<T>,
}

// SAFETY: The registration is only changed by `misc_register` and `misc_deregister`, which may
// be called from any thread.
unsafe impl<T> Send for MiscDeviceRegistration<T> {}

// SAFETY: `&MiscDeviceRegistration` only gives access to the raw pointer of the device.
unsafe impl<T> Sync for MiscDeviceRegistration<T> {}

impl<T: MiscDevice> MiscDeviceRegistration<T> {
    /// Registers a misc device whose node has the permissions `mode` (0 for the default, 0600),
    /// with the operations `fops`, which keep their module loaded while a file of the device is
    /// open.
    pub fn register_with_fops(
        opts: MiscDeviceOptions,
        mode: u16,
        fops: &'static MiscDeviceFops<T>,
    ) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| {
            // SAFETY: `slot` is valid for writes and pinned; an `Opaque` field may be written
            // through its raw pointer.
            let inner = unsafe { Opaque::raw_get(core::ptr::addr_of!((*slot).inner)) };
            // SAFETY: `inner` is valid for writes (see above); the write initializes memory we
            // own.
            unsafe { inner.write(opts.to_raw_with(mode, &fops.fops)) };
            // SAFETY: `inner` is initialized and pinned, and points at `'static` operations.
            // INVARIANT: On success the device stays registered until `drop` deregisters it.
            to_result(unsafe { bindings::misc_register(inner) })
        };
        // SAFETY: On success `init` initialized every field (`_t` is a ZST); on failure the
        // device was not registered and nothing needs to be dropped.
        unsafe { init::pin_init_from_closure(init) }
    }

    /// Returns a raw pointer to the misc device.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::miscdevice {
        self.inner.get()
    }
}

#[pinned_drop]
impl<T> PinnedDrop for MiscDeviceRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariants the device is registered. Files opened before stay
        // usable: their operations are `'static`.
        unsafe { bindings::misc_deregister(self.inner.get()) };
    }
}

/// The file operations of a misc device.
#[vtable]
pub trait MiscDevice: Sized {
    /// What `open` makes for each open file, and the other operations get.
    type Ptr: ForeignOwnable + Send + Sync;

    /// Called when the device is opened; the result is kept with the file.
    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<Self::Ptr>;

    /// Called when the last reference to the file is dropped: `file` is only valid for the
    /// call, and must not be used to take a new reference (`ARef::from`).
    fn release(device: Self::Ptr, _file: &File) {
        drop(device);
    }

    /// Handles `ioctl(2)`; the result is returned to user space.
    fn ioctl(
        _device: <Self::Ptr as ForeignOwnable>::Borrowed<'_>,
        _file: &File,
        _cmd: u32,
        _arg: usize,
    ) -> Result<isize> {
        crate::build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Handles `ioctl(2)` from a 32-bit process on a 64-bit kernel. Without it, a device with
    /// [`MiscDevice::ioctl`] gets the call there, with `arg` converted by `compat_ptr()`.
    #[cfg(CONFIG_COMPAT)]
    fn compat_ioctl(
        _device: <Self::Ptr as ForeignOwnable>::Borrowed<'_>,
        _file: &File,
        _cmd: u32,
        _arg: usize,
    ) -> Result<isize> {
        crate::build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The `file_operations` of a [`MiscDevice`], built at compile time.
struct MiscdeviceVTable<T: MiscDevice>(PhantomData<T>);

impl<T: MiscDevice> MiscdeviceVTable<T> {
    /// # Safety
    ///
    /// Called by `misc_open()` with `file->private_data` pointing at the `struct miscdevice` of
    /// a [`MiscDeviceRegistration<T>`].
    unsafe extern "C" fn open(
        _inode: *mut bindings::inode,
        raw_file: *mut bindings::file,
    ) -> c_int {
        // SAFETY: The caller guarantees that `private_data` is the misc device, which a
        // `MiscDeviceRegistration<T>` wraps (`repr(transparent)`), registered and so alive while
        // it can be opened.
        let misc = unsafe { &*(*raw_file).private_data.cast::<MiscDeviceRegistration<T>>() };
        // SAFETY: The VFS keeps the file valid during the call.
        let file = unsafe { File::from_raw_file(raw_file) };
        match T::open(file, misc) {
            Ok(ptr) => {
                // SAFETY: The file is being opened: nothing else uses `private_data` yet.
                unsafe { (*raw_file).private_data = ptr.into_foreign().cast_mut() };
                0
            }
            Err(err) => err.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the VFS once, for a file that [`Self::open`] opened, when its last reference is
    /// gone: the `&File` handed to [`MiscDevice::release`] must not be used to take a new one.
    unsafe extern "C" fn release(
        _inode: *mut bindings::inode,
        raw_file: *mut bindings::file,
    ) -> c_int {
        // SAFETY: The file is valid during the call, and `open` stored `into_foreign()` in
        // `private_data`; this is its last use, so ownership goes back to `T::Ptr`.
        let ptr = unsafe { T::Ptr::from_foreign((*raw_file).private_data) };
        // SAFETY: The VFS keeps the file valid during the call.
        T::release(ptr, unsafe { File::from_raw_file(raw_file) });
        0
    }

    /// Calls `handler` with the state [`Self::open`] kept for `raw_file`, and returns its result
    /// the way the VFS wants it.
    ///
    /// # Safety
    ///
    /// `raw_file` is a file that [`Self::open`] opened, valid for the duration of the call.
    unsafe fn with_device(
        raw_file: *mut bindings::file,
        handler: impl FnOnce(<T::Ptr as ForeignOwnable>::Borrowed<'_>, &File) -> Result<isize>,
    ) -> c_long {
        // SAFETY: `open` stored `into_foreign()` in `private_data`, and `release` does not run
        // while the file is in use.
        let device = unsafe { T::Ptr::borrow((*raw_file).private_data) };
        // SAFETY: The caller guarantees that the file is valid during the call.
        let file = unsafe { File::from_raw_file(raw_file) };
        match handler(device, file) {
            Ok(ret) => ret as c_long,
            Err(err) => err.to_errno() as c_long,
        }
    }

    /// # Safety
    ///
    /// Called by the VFS with a file that [`Self::open`] opened, during the call.
    unsafe extern "C" fn ioctl(raw_file: *mut bindings::file, cmd: c_uint, arg: c_ulong) -> c_long {
        // SAFETY: The VFS passes a file of the device, valid during the call.
        unsafe { Self::with_device(raw_file, |device, file| T::ioctl(device, file, cmd, arg)) }
    }

    /// # Safety
    ///
    /// As for [`Self::ioctl`].
    #[cfg(CONFIG_COMPAT)]
    unsafe extern "C" fn compat_ioctl(
        raw_file: *mut bindings::file,
        cmd: c_uint,
        arg: c_ulong,
    ) -> c_long {
        // SAFETY: As in `ioctl`.
        unsafe {
            Self::with_device(raw_file, |device, file| {
                T::compat_ioctl(device, file, cmd, arg)
            })
        }
    }

    const VTABLE: bindings::file_operations = bindings::file_operations {
        open: Some(Self::open),
        release: Some(Self::release),
        unlocked_ioctl: if T::HAS_IOCTL {
            Some(Self::ioctl)
        } else {
            None
        },
        #[cfg(CONFIG_COMPAT)]
        compat_ioctl: if T::HAS_COMPAT_IOCTL {
            Some(Self::compat_ioctl)
        } else if T::HAS_IOCTL {
            Some(bindings::compat_ptr_ioctl)
        } else {
            None
        },
        // SAFETY: All zeroes is a valid `struct file_operations`: no other operation.
        ..unsafe { MaybeUninit::zeroed().assume_init() }
    };
}
