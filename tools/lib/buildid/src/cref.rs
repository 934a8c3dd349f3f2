// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around the C original `lib/buildid.c`, compiled by `build.rs` into
//! `libbuildid_cref.a` together with `shim/buildid_shim.c`.
//!
//! Every call starts from the same sentinel-filled output buffer and size as
//! [`Outcome::from_rust`], so "C did not touch the output" is compared too.

use crate::elf::{BuildId, BUILD_ID_SIZE_MAX};
use crate::model::FileModel;
use kernel::error::Result;
use std::os::raw::{c_char, c_int, c_uint, c_ulong};

/// Value the output buffer is filled with before a call.
pub const SENTINEL_BYTE: u8 = 0xa5;
/// Value the output size is set to before a call.
pub const SENTINEL_SIZE: u32 = 0xdead_beef;
/// Initial capacity of the `__kernel_read()` trace buffer.
const TRACE_CAP: usize = 4096;

/// Path of the C file that was compiled (set by `build.rs`).
pub const C_SOURCE: &str = env!("BUILDID_C_SOURCE_USED");

/// Result of one call, in C terms: return value, the 20-byte output buffer and the
/// size output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// 0 or a negative errno.
    pub ret: i32,
    /// The `build_id` buffer after the call.
    pub id: [u8; BUILD_ID_SIZE_MAX],
    /// `*size` after the call.
    pub size: u32,
}

impl Outcome {
    /// What the C calling convention would show for a Rust result.
    pub fn from_rust(r: &Result<BuildId>) -> Self {
        match r {
            Ok(id) => Self {
                ret: 0,
                id: *id.padded(),
                size: id.size(),
            },
            Err(e) => Self {
                ret: e.to_errno(),
                id: [SENTINEL_BYTE; BUILD_ID_SIZE_MAX],
                size: SENTINEL_SIZE,
            },
        }
    }

    fn sentinel() -> Self {
        Self {
            ret: i32::MIN,
            id: [SENTINEL_BYTE; BUILD_ID_SIZE_MAX],
            size: SENTINEL_SIZE,
        }
    }
}

/// A C call on a file model, with what the shim observed.
#[derive(Clone, Debug)]
pub struct FileCall {
    /// Return value and outputs.
    pub outcome: Outcome,
    /// `(pos, count)` of each `__kernel_read()` call (sleepable mode).
    pub trace: Vec<(i64, u64)>,
    /// Successful `filemap_get_folio()` calls.
    pub folio_gets: i64,
    /// `folio_put()` calls.
    pub folio_puts: i64,
    /// `kmap_local_folio()` calls.
    pub kmaps: i64,
    /// `kunmap_local()` calls.
    pub kunmaps: i64,
    /// `WARN_ON()` hits.
    pub warns: u64,
    /// `filemap_get_folio()` calls.
    pub lookups: u64,
}

impl FileCall {
    /// Every folio reference and mapping taken was released, and nothing warned.
    pub fn balanced(&self) -> bool {
        self.folio_gets == self.folio_puts && self.kmaps == self.kunmaps && self.warns == 0
    }
}

/// Mode of the file-backed C freader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `may_fault == true`: `__kernel_read()`.
    Sleepable,
    /// `may_fault == false`: page cache only.
    Nofault,
}

/// Exported entry point to call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `build_id_parse(vma)`.
    Parse = 0,
    /// `build_id_parse_nofault(vma)`.
    ParseNofault = 1,
    /// `build_id_parse_file(file)`.
    ParseFile = 2,
}

#[repr(C)]
struct ShimRead {
    pos: i64,
    count: u64,
}

/// Mirror of `struct shim_model` (shim/include/shim_model.h).
#[repr(C)]
struct ShimModel {
    data: *const u8,
    size: u64,
    folio_size: u64,
    cache: *const u8,
    cache_len: u64,
    secretmem: c_int,
    reserved: c_int,
    trace: *mut ShimRead,
    trace_cap: u64,
    evict_mask: u64,
    trace_len: u64,
    folio_gets: i64,
    folio_puts: i64,
    kmaps: i64,
    kunmaps: i64,
    warns: u64,
    lookups: u64,
    image: *mut u8,
}

extern "C" {
    fn shim_build_id_parse(
        m: *mut ShimModel,
        may_fault: c_int,
        id: *mut u8,
        size: *mut u32,
    ) -> c_int;
    fn shim_build_id_parse_entry(
        m: *mut ShimModel,
        entry: c_int,
        id: *mut u8,
        size: *mut u32,
    ) -> c_int;
    fn shim_build_id_parse_anon_vma(nofault: c_int) -> c_int;
    fn shim_parse_notes_file(
        m: *mut ShimModel,
        may_fault: c_int,
        note_off: i64,
        note_size: u32,
        id: *mut u8,
        size: *mut u32,
    ) -> c_int;
    fn shim_parse_notes_mem(
        data: *const c_char,
        data_sz: u64,
        note_off: i64,
        note_size: u32,
        id: *mut u8,
        size: *mut u32,
        warns: *mut c_ulong,
    ) -> c_int;
    fn shim_build_id_parse_buf(
        buf: *const u8,
        id: *mut u8,
        buf_size: u32,
        warns: *mut c_ulong,
    ) -> c_int;
    fn shim_build_id_size_max() -> c_uint;
}

/// Runs `f` on a shim model of `file` and collects what the shim observed. The calls
/// are deterministic, so if the trace buffer was too small the call is repeated with
/// a buffer of the right size.
fn with_model(file: &FileModel, f: impl Fn(*mut ShimModel, &mut Outcome) -> c_int) -> FileCall {
    let first = with_model_cap(file, &f, TRACE_CAP);
    match first {
        Ok(call) => call,
        Err(needed) => with_model_cap(file, &f, needed).expect("deterministic C call"),
    }
}

fn with_model_cap(
    file: &FileModel,
    f: &impl Fn(*mut ShimModel, &mut Outcome) -> c_int,
    cap: usize,
) -> Result<FileCall, usize> {
    assert!(file.folio_size >= crate::model::PAGE_SIZE && file.folio_size.is_power_of_two());
    let cache: Vec<u8> = file.cache.iter().map(|s| *s as u8).collect();
    let mut trace: Vec<ShimRead> = (0..cap).map(|_| ShimRead { pos: 0, count: 0 }).collect();
    let mut m = ShimModel {
        data: file.data.as_ptr(),
        size: file.data.len() as u64,
        folio_size: file.folio_size,
        cache: cache.as_ptr(),
        cache_len: cache.len() as u64,
        secretmem: c_int::from(file.secretmem),
        reserved: 0,
        trace: trace.as_mut_ptr(),
        trace_cap: cap as u64,
        evict_mask: file.evict_mask,
        trace_len: 0,
        folio_gets: 0,
        folio_puts: 0,
        kmaps: 0,
        kunmaps: 0,
        warns: 0,
        lookups: 0,
        image: std::ptr::null_mut(),
    };
    let mut outcome = Outcome::sentinel();
    outcome.ret = f(&mut m, &mut outcome);
    if m.trace_len as usize > cap {
        return Err(m.trace_len as usize);
    }
    trace.truncate(m.trace_len as usize);
    Ok(FileCall {
        outcome,
        trace: trace.iter().map(|r| (r.pos, r.count)).collect(),
        folio_gets: m.folio_gets,
        folio_puts: m.folio_puts,
        kmaps: m.kmaps,
        kunmaps: m.kunmaps,
        warns: m.warns,
        lookups: m.lookups,
    })
}

/// `__build_id_parse(file, build_id, size, mode == Sleepable)`.
pub fn build_id_parse(file: &FileModel, mode: Mode) -> FileCall {
    with_model(file, |m, o| {
        // SAFETY: `m` points to a fully initialised model whose pointers (data, cache,
        // trace with `trace_cap` entries) outlive the call; `o.id` has the
        // BUILD_ID_SIZE_MAX bytes the C code may write and `o.size` is a valid u32.
        unsafe {
            shim_build_id_parse(
                m,
                c_int::from(mode == Mode::Sleepable),
                o.id.as_mut_ptr(),
                &mut o.size,
            )
        }
    })
}

/// One of the exported entry points, on a VMA/file backed by `file`.
pub fn build_id_parse_entry(file: &FileModel, entry: Entry) -> FileCall {
    with_model(file, |m, o| {
        // SAFETY: as in `build_id_parse()`.
        unsafe { shim_build_id_parse_entry(m, entry as c_int, o.id.as_mut_ptr(), &mut o.size) }
    })
}

/// `build_id_parse{,_nofault}()` on a VMA whose `vm_file` is NULL.
pub fn build_id_parse_anon_vma(nofault: bool) -> i32 {
    // SAFETY: the shim function only uses its own locals.
    unsafe { shim_build_id_parse_anon_vma(c_int::from(nofault)) }
}

/// `parse_build_id()` with a file-backed freader.
pub fn parse_notes_file(file: &FileModel, mode: Mode, note_off: i64, note_size: u32) -> FileCall {
    with_model(file, |m, o| {
        // SAFETY: as in `build_id_parse()`.
        unsafe {
            shim_parse_notes_file(
                m,
                c_int::from(mode == Mode::Sleepable),
                note_off,
                note_size,
                o.id.as_mut_ptr(),
                &mut o.size,
            )
        }
    })
}

/// `parse_build_id()` with a memory freader over `data` (`data_sz = data.len()`).
/// Returns the outcome and the number of `WARN_ON()` hits.
pub fn parse_notes_mem(data: &[u8], note_off: i64, note_size: u32) -> (Outcome, u64) {
    let mut o = Outcome::sentinel();
    let mut warns: c_ulong = 0;
    // SAFETY: `data` is valid for `data.len()` bytes and the C code only reads inside
    // `[0, data_sz)` (it checks `file_off + sz > data_sz` first); outputs as in
    // `build_id_parse()`.
    o.ret = unsafe {
        shim_parse_notes_mem(
            data.as_ptr().cast(),
            data.len() as u64,
            note_off,
            note_size,
            o.id.as_mut_ptr(),
            &mut o.size,
            &mut warns,
        )
    };
    (o, warns)
}

/// `build_id_parse_buf(data, build_id, data.len())`. C does not report a size, so
/// `size` stays [`SENTINEL_SIZE`]. Returns the outcome and the `WARN_ON()` hits.
pub fn build_id_parse_buf(data: &[u8]) -> (Outcome, u64) {
    let buf_size = u32::try_from(data.len()).expect("build_id_parse_buf() takes a u32 size");
    let mut o = Outcome::sentinel();
    let mut warns: c_ulong = 0;
    // SAFETY: `data` is valid for `buf_size` bytes; outputs as in `build_id_parse()`.
    o.ret =
        unsafe { shim_build_id_parse_buf(data.as_ptr(), o.id.as_mut_ptr(), buf_size, &mut warns) };
    (o, warns)
}

/// `BUILD_ID_SIZE_MAX` as defined by the kernel tree's `<linux/buildid.h>`.
pub fn build_id_size_max() -> usize {
    // SAFETY: returns a constant.
    unsafe { shim_build_id_size_max() as usize }
}
