// SPDX-License-Identifier: GPL-2.0

//! Folios of the page cache.
//!
//! C header: [`include/linux/pagemap.h`](srctree/include/linux/pagemap.h)

use crate::{
    bindings,
    error::{code::*, Result},
    fs::address_space::AddressSpace,
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::ptr::NonNull;

/// A folio: a physically contiguous, naturally aligned set of pages.
///
/// Instances of this type are always reference-counted, that is, a call to `folio_get` ensures
/// that the allocation remains valid at least until the matching call to `folio_put`.
///
/// Page-cache memory can be changed at any time by a writer of the file, so this type never
/// hands out references to the folio's contents: data is copied out by value.
///
/// # Invariants
///
/// The folio is valid and its reference count is non-zero for as long as the `Folio` is
/// reachable.
#[repr(transparent)]
pub struct Folio(Opaque<bindings::folio>);

// SAFETY: The refcount of a folio may be taken and dropped from any thread, and `Folio` only
// exposes operations that are safe to call concurrently.
unsafe impl Send for Folio {}

// SAFETY: All methods taking `&Folio` are safe to call from several threads at once.
unsafe impl Sync for Folio {}

// SAFETY: The type invariants guarantee that `Folio` is always reference-counted.
unsafe impl AlwaysRefCounted for Folio {
    #[inline]
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference means that the refcount is non-zero.
        unsafe { bindings::folio_get(self.as_raw()) };
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The safety requirements guarantee that the refcount is non-zero.
        unsafe { bindings::folio_put(obj.cast().as_ptr()) }
    }
}

impl Folio {
    /// Returns a raw pointer to the folio.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::folio {
        self.0.get()
    }
}

/// A referenced folio together with what reading its bytes needs, computed once: its position in
/// its file, its size and, on kernels without `CONFIG_HIGHMEM`, its address in the kernel's
/// linear map (which covers all memory there, so no temporary mapping is needed).
///
/// Page-cache memory can be changed at any time by a writer of the file, so this type hands out
/// copies of the bytes, never references to them. The copies are made with volatile loads (the
/// kernel's `READ_ONCE()`), so each byte is read once and the compiler may neither re-read nor
/// assume anything about it.
///
/// # Invariants
///
/// - `pos` and `size` are the position and size of `folio` (`size` may be 0 instead, for a view
///   that reads nothing); they do not change while the folio is referenced (a referenced folio
///   cannot be split).
/// - Without `CONFIG_HIGHMEM`, `addr` is the linear-map address of the first byte of `folio`, and
///   `addr..addr + size` stays mapped and readable while `folio` is referenced.
pub struct FolioView {
    /// The reference that keeps the folio, and so `addr`, valid; without `CONFIG_HIGHMEM` it is
    /// only dropped, never read.
    #[cfg_attr(not(CONFIG_HIGHMEM), allow(dead_code))]
    folio: ARef<Folio>,
    pos: i64,
    size: usize,
    #[cfg(not(CONFIG_HIGHMEM))]
    addr: NonNull<u8>,
}

impl FolioView {
    /// Looks up the folio caching `index` of `mapping` without sleeping, and returns a view of
    /// it if it is uptodate; `None` if no folio caches that index or the one that does is not
    /// uptodate.
    ///
    /// One call into C, which computes what the view needs with its own inline helpers.
    #[inline]
    pub fn lookup_uptodate(mapping: &AddressSpace, index: usize) -> Option<Self> {
        let mut pos: bindings::loff_t = 0;
        let mut size: usize = 0;
        let mut addr: *mut core::ffi::c_void = core::ptr::null_mut();
        // SAFETY: `mapping` is a valid address space by the type invariants of `AddressSpace`,
        // and the out-pointers are valid for writes. The lookup neither sleeps nor takes a
        // sleeping lock.
        let folio = unsafe {
            bindings::filemap_get_uptodate_folio(
                mapping.as_ptr(),
                index,
                &mut pos,
                &mut size,
                &mut addr,
            )
        };
        let folio = NonNull::new(folio)?;
        // SAFETY: The helper returned a folio with its refcount incremented, which the new
        // `ARef` takes over.
        let folio: ARef<Folio> = unsafe { ARef::from_raw(folio.cast()) };
        // With `CONFIG_HIGHMEM` the helper leaves `addr` NULL: the bytes are copied through
        // `kmap_local_folio()` instead.
        #[cfg(CONFIG_HIGHMEM)]
        let _ = addr;
        // `folio_address()` never returns NULL without `CONFIG_HIGHMEM`; should it, the view is
        // empty and every read fails its bounds check.
        #[cfg(not(CONFIG_HIGHMEM))]
        let (addr, size) = match NonNull::new(addr.cast::<u8>()) {
            Some(addr) => (addr, size),
            None => (NonNull::dangling(), 0),
        };
        // INVARIANT: `pos` and `size` are the folio's own (or `size` is 0) and `addr` is its
        // linear-map address, all computed by the helper while the folio is referenced.
        Some(Self {
            folio,
            pos,
            size,
            #[cfg(not(CONFIG_HIGHMEM))]
            addr,
        })
    }

    /// The byte position of the folio in its file.
    #[inline]
    pub fn pos(&self) -> i64 {
        self.pos
    }

    /// The number of bytes in the folio.
    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Copies `dst.len()` bytes starting at `offset` within the folio into `dst`.
    ///
    /// Returns [`EINVAL`] if the range is not inside the folio. Never sleeps, so it may be used
    /// in any context. A concurrent writer may change the data while it is copied; `dst` then
    /// holds some mix of old and new bytes, as with every other reader of the page cache.
    #[inline(always)]
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result {
        // Written so that no addition can overflow.
        if offset > self.size || dst.len() > self.size - offset {
            return Err(EINVAL);
        }
        #[cfg(not(CONFIG_HIGHMEM))]
        // SAFETY: `offset..offset + dst.len()` lies inside the folio (checked above), so by the
        // type invariants `addr + offset` is valid for reading `dst.len()` bytes while
        // `self.folio` is referenced, which it is for the whole call.
        unsafe {
            read_once_bytes(self.addr.as_ptr().add(offset), dst)
        };
        #[cfg(CONFIG_HIGHMEM)]
        if !dst.is_empty() {
            // SAFETY: The folio is valid by the type invariants of `Folio`,
            // `offset..offset + dst.len()` lies inside it (checked above), and `dst` is valid for
            // writing `dst.len()` bytes.
            // `memcpy_from_folio()` maps one page at a time with `kmap_local_folio()`, which is
            // allowed in any context.
            unsafe {
                bindings::memcpy_from_folio(
                    dst.as_mut_ptr().cast(),
                    self.folio.as_raw(),
                    offset,
                    dst.len(),
                )
            };
        }
        Ok(())
    }
}

/// A `T` at any address: `read_volatile()` needs an aligned pointer, and `Unaligned<T>` is
/// aligned at every address. The compiler reads it with one load where the architecture
/// allows unaligned ones (x86_64, arm64), and with narrower loads where it does not.
#[cfg(not(CONFIG_HIGHMEM))]
#[repr(C, packed)]
#[derive(Clone, Copy)]
struct Unaligned<T: Copy>(T);

/// Reads a `T` at `src` with one volatile load.
///
/// # Safety
///
/// `src` must be valid for reading `size_of::<T>()` bytes.
#[cfg(not(CONFIG_HIGHMEM))]
#[inline(always)]
unsafe fn read_once<T: Copy>(src: *const u8) -> T {
    // SAFETY: `Unaligned<T>` has alignment 1, so any pointer is aligned for it, and the caller
    // guarantees that `src` is valid for reading its size, which is `T`'s.
    unsafe { core::ptr::read_volatile(src.cast::<Unaligned<T>>()) }.0
}

/// Copies `dst.len()` bytes from `src` into `dst` with volatile loads, so that memory a writer
/// may change concurrently is read once per byte, with no call: one load for a field of 1, 2,
/// 4 or 8 bytes (what a parser of binary headers reads), eight bytes at a time otherwise.
///
/// # Safety
///
/// `src` must be valid for reading `dst.len()` bytes.
#[cfg(not(CONFIG_HIGHMEM))]
#[inline(always)]
unsafe fn read_once_bytes(src: *const u8, dst: &mut [u8]) {
    // By the safety requirements `src` is valid for reading `dst.len()` bytes, and every read
    // below stays within them. The fixed sizes are stored as arrays, so that a field the caller
    // reads back becomes a single load into a register.
    if let Ok(d) = <&mut [u8; 8]>::try_from(&mut *dst) {
        // SAFETY: `src` is readable for 8 bytes (see above).
        *d = unsafe { read_once::<u64>(src) }.to_ne_bytes();
        return;
    }
    if let Ok(d) = <&mut [u8; 4]>::try_from(&mut *dst) {
        // SAFETY: `src` is readable for 4 bytes (see above).
        *d = unsafe { read_once::<u32>(src) }.to_ne_bytes();
        return;
    }
    if let Ok(d) = <&mut [u8; 2]>::try_from(&mut *dst) {
        // SAFETY: `src` is readable for 2 bytes (see above).
        *d = unsafe { read_once::<u16>(src) }.to_ne_bytes();
        return;
    }
    let mut words = dst.chunks_exact_mut(8);
    let mut at = 0;
    for word in &mut words {
        if let Ok(word) = <&mut [u8; 8]>::try_from(word) {
            // SAFETY: `src` is readable for `dst.len()` bytes and `at + 8 <= dst.len()`.
            *word = unsafe { read_once::<u64>(src.add(at)) }.to_ne_bytes();
        }
        at += 8;
    }
    for byte in words.into_remainder() {
        // SAFETY: `src` is readable for `dst.len()` bytes and `at < dst.len()`.
        *byte = unsafe { read_once::<u8>(src.add(at)) };
        at += 1;
    }
}
