// SPDX-License-Identifier: GPL-2.0

//! Pure, reader-agnostic ELF build ID parser.
//!
//! A line-by-line port of the parsing half of `lib/buildid.c` (Linux 6.12):
//! `__build_id_parse()`, `get_build_id_32()`, `get_build_id_64()`, `parse_build_id()`
//! and the mode-independent part of `freader_fetch()`. How bytes are obtained (page
//! cache folios, `__kernel_read()`, a memory buffer) is behind the [`ReadAt`] trait, so
//! the same file runs in the kernel (in `lib/buildid/`) and in the host test crate
//! `tools/lib/buildid`, which includes it via `#[path]` and compares it against the
//! compiled C original.
//!
//! The file uses only `core`, `kernel::error` (which the host crate provides with the
//! same values) and no `unsafe` code, so it compiles unchanged in both crates. Fields
//! are copied by value out of the reader, once each, so the parser never holds a
//! reference into memory a writer may change. Nothing can panic: where C checks
//! for overflow this uses `checked_*`, where C relies on modular arithmetic or
//! conversions it uses `wrapping_*` and the conversion helpers at the end of the file.
//!
//! For every input the result (and, for a file-backed reader, the sequence of fetches)
//! is the one of the C code, including the C behaviour that looks like a bug but is kept
//! on purpose. Those quirks are listed in `Documentation/core-api/buildid.rst`
//! ("C behaviour kept on purpose"); the code that keeps quirk N says `(quirk N)`.

#![forbid(unsafe_code)]
// Mechanical enforcement of "nothing here can panic" (honoured by clippy, ignored
// by a plain rustc build).
#![deny(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    clippy::todo
)]

use kernel::error::{code::*, Result};

/// `BUILD_ID_SIZE_MAX` from `include/linux/buildid.h`: the largest descriptor
/// accepted as a build ID, and the size of the zero-padded result.
pub const BUILD_ID_SIZE_MAX: usize = 20;
/// `MAX_PHDR_CNT`: upper bound on the number of program headers examined.
pub const MAX_PHDR_CNT: u32 = 256;
/// `MAX_NOTE_CNT`: upper bound on the note headers read in one parse, over all `PT_NOTE`
/// segments. Real files have a handful; without a bound, `PT_NOTE` segments that each span
/// megabytes of empty notes keep one parse reading for seconds.
pub const MAX_NOTE_CNT: u32 = 256;
/// `MAX_FREADER_BUF_SZ`: the size of the C bounce buffer; no single read issued by the
/// parser is longer than this (checked at compile time below).
pub const MAX_FREADER_BUF_SZ: usize = 64;

/// `BUILD_ID` in `lib/buildid.c`, i.e. `NT_GNU_BUILD_ID`.
const NT_GNU_BUILD_ID: u32 = 3;
/// `PT_NOTE`.
const PT_NOTE: u32 = 4;
/// `ET_EXEC`.
const ET_EXEC: u16 = 2;
/// `ET_DYN`.
const ET_DYN: u16 = 3;
/// `ELFMAG`, compared over `SELFMAG` (4) bytes.
const ELFMAG: [u8; 4] = *b"\x7fELF";
/// Index of `EI_CLASS` in `e_ident`.
const EI_CLASS: usize = 4;
/// `ELFCLASS32`.
const ELFCLASS32: u8 = 1;
/// `ELFCLASS64`.
const ELFCLASS64: u8 = 2;
/// Offset of `e_type` (identical for both classes).
const E_TYPE_OFF: usize = 16;
/// `offsetofend(Elf32_Ehdr, e_type)`: size of the first, class-independent read.
const EHDR_PREFIX_SZ: usize = 18;

/// `sizeof(Elf32_Nhdr)` (`Elf64_Nhdr` is identical).
const NHDR_SZ: usize = 12;
/// The note name the build ID must carry, including its NUL (`const char note_name[]`).
const NOTE_NAME: [u8; 4] = *b"GNU\0";
/// `note_name_sz = sizeof(note_name)`.
const NOTE_NAME_SZ: usize = NOTE_NAME.len();
/// Note padding used by `parse_build_id()`: always 4, whatever `p_align` says.
const NOTE_ALIGN: u32 = 4;
/// The loop bound and header read size: `sizeof(Elf32_Nhdr) + note_name_sz` (16).
const NOTE_HDR_READ_SZ: usize = NHDR_SZ + NOTE_NAME_SZ;

// Every read the parser issues fits in the C bounce buffer, so the C `WARN_ON(sz >
// buf_sz)` / `-E2BIG` path is unreachable for both implementations.
const _: () = assert!(ELF64.ehdr_sz <= MAX_FREADER_BUF_SZ);
const _: () = assert!(ELF32.ehdr_sz <= MAX_FREADER_BUF_SZ);
const _: () = assert!(ELF64.phdr_sz <= MAX_FREADER_BUF_SZ);
const _: () = assert!(ELF32.phdr_sz <= MAX_FREADER_BUF_SZ);
const _: () = assert!(NOTE_HDR_READ_SZ <= MAX_FREADER_BUF_SZ);
const _: () = assert!(BUILD_ID_SIZE_MAX <= MAX_FREADER_BUF_SZ);
const _: () = assert!(EHDR_PREFIX_SZ <= MAX_FREADER_BUF_SZ);

/// Source of file (or buffer) bytes for the parser.
///
/// This replaces the mode-specific part of the C `struct freader`.
pub trait ReadAt {
    /// Copies exactly `buf.len()` bytes starting at `offset` into `buf`.
    ///
    /// `offset` is an `loff_t` and may be negative (quirks 6 to 8); implementations must
    /// reject such offsets with the error of the C `freader` mode they model. On failure,
    /// return the error the corresponding C mode would store in `r->err` (e.g.
    /// [`EIO`] for a short `__kernel_read()`, [`EFAULT`] for a page missing
    /// from the page cache, [`ERANGE`] for a memory buffer). The contents of `buf`
    /// after a failure are unspecified and are never used.
    ///
    /// The parser (or [`fetch`]) has already rejected requests for which
    /// `offset + buf.len()` wraps around in 64-bit unsigned arithmetic before this, or
    /// [`ReadAt::fetch_at`], is called.
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result;

    /// Makes the `buf.len()` bytes at `offset` available to the parser, which then reads the
    /// few fields it needs from them: what C's `freader_fetch()` does when it returns a
    /// pointer into the folio instead of copying.
    ///
    /// A reader either copies the bytes into `buf` and returns [`Fetched::InBuffer`] (the
    /// default, with [`ReadAt::read_at`]), or keeps them where they are, returns
    /// [`Fetched::InReader`] and serves [`ReadAt::read_fetched`] until it is called again.
    /// Either way it fails exactly when `read_at` would, with the same error.
    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched> {
        self.read_at(offset, buf).map(|()| Fetched::InBuffer)
    }

    /// Copies bytes `at..at + dst.len()` of the last fetch into `dst`, after
    /// [`ReadAt::fetch_at`] returned [`Fetched::InReader`]; the parser only asks for bytes
    /// inside that fetch. A reader that never keeps bytes is never asked; the default fills
    /// `dst` with zeroes.
    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        let _ = at;
        dst.fill(0);
    }
}

/// Where [`ReadAt::fetch_at`] left the fetched bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// In the buffer the parser passed.
    InBuffer,
    /// In the reader, readable with [`ReadAt::read_fetched`].
    InReader,
}

/// The byte order the parser reads multi-byte fields in.
///
/// C reads every field in the CPU's byte order and ignores `EI_DATA` (quirk 3), and so does
/// [`NativeEndian`], which every parse in the kernel uses. The trait exists so that the host
/// tests can run the parser as a CPU of the other byte order would, on byte-swapped images.
pub trait ByteOrder {
    /// A `u16` from its bytes in file order.
    fn u16(bytes: [u8; 2]) -> u16;
    /// A `u32` from its bytes in file order.
    fn u32(bytes: [u8; 4]) -> u32;
    /// A `u64` from its bytes in file order.
    fn u64(bytes: [u8; 8]) -> u64;
}

/// The CPU's byte order, as C reads ELF fields.
pub struct NativeEndian;

impl ByteOrder for NativeEndian {
    #[inline(always)]
    fn u16(bytes: [u8; 2]) -> u16 {
        u16::from_ne_bytes(bytes)
    }

    #[inline(always)]
    fn u32(bytes: [u8; 4]) -> u32 {
        u32::from_ne_bytes(bytes)
    }

    #[inline(always)]
    fn u64(bytes: [u8; 8]) -> u64 {
        u64::from_ne_bytes(bytes)
    }
}

/// C's `struct freader` as the parser sees it: the reader and the buffer a fetch may be
/// copied into, plus the parse's note budget (C's `notes_left`).
struct Fetcher<'r, R: ?Sized> {
    reader: &'r mut R,
    buf: [u8; MAX_FREADER_BUF_SZ],
    /// Note headers this parse may still read.
    notes_left: u32,
}

impl<'r, R: ReadAt + ?Sized> Fetcher<'r, R> {
    fn new(reader: &'r mut R) -> Self {
        Self {
            reader,
            buf: [0; MAX_FREADER_BUF_SZ],
            notes_left: MAX_NOTE_CNT,
        }
    }

    /// Takes one note header from the budget; `false` once [`MAX_NOTE_CNT`] were read.
    #[inline(always)]
    fn take_note(&mut self) -> bool {
        match self.notes_left.checked_sub(1) {
            Some(left) => {
                self.notes_left = left;
                true
            }
            None => false,
        }
    }

    /// `freader_fetch()` of `len` bytes at `file_off`: [`fetch`]'s checks, then
    /// [`ReadAt::fetch_at`].
    ///
    /// The fetched bytes are read through the returned [`Fetch`], which borrows the fetcher:
    /// they cannot be looked at after the next fetch, which may replace them. (C's rule that
    /// the pointer `freader_fetch()` returns is only valid until the next call.)
    #[inline(always)]
    fn fetch<O: ByteOrder>(&mut self, file_off: i64, len: usize) -> Result<Fetch<'_, R, O>> {
        check_fetch(file_off, len)?;
        // The parser never asks for more than the buffer holds (see the assertions on
        // `MAX_FREADER_BUF_SZ`): C's `WARN_ON()` path.
        let buf = self.buf.get_mut(..len).ok_or(E2BIG)?;
        let kept = self.reader.fetch_at(file_off, buf)?;
        Ok(Fetch {
            reader: &*self.reader,
            bytes: match kept {
                Fetched::InReader => None,
                Fetched::InBuffer => Some(self.buf.get(..len).unwrap_or(&[])),
            },
            order: core::marker::PhantomData,
        })
    }
}

/// The bytes of one fetch, read field by field, by value, in byte order `O`.
struct Fetch<'f, R: ?Sized, O> {
    reader: &'f R,
    /// The bytes, if the reader copied them into the fetcher's buffer; `None` if it kept them
    /// ([`Fetched::InReader`]).
    bytes: Option<&'f [u8]>,
    order: core::marker::PhantomData<O>,
}

impl<R: ReadAt + ?Sized, O: ByteOrder> Fetch<'_, R, O> {
    /// Copies bytes `at..at + dst.len()` of the fetch; zeroes where that range is not inside
    /// it (which the constant in-bounds offsets used in this file never cause).
    #[inline(always)]
    fn copy(&self, at: usize, dst: &mut [u8]) {
        match self.bytes {
            // The reader checks the range.
            None => self.reader.read_fetched(at, dst),
            Some(bytes) => match bytes.get(at..).and_then(|tail| tail.get(..dst.len())) {
                Some(src) => dst.copy_from_slice(src),
                None => dst.fill(0),
            },
        }
    }

    /// Bytes `at..at + N` of the fetch.
    #[inline(always)]
    fn array<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut out = [0u8; N];
        self.copy(at, &mut out);
        out
    }

    /// A `u16` at `at`.
    #[inline(always)]
    fn u16(&self, at: usize) -> u16 {
        O::u16(self.array(at))
    }

    /// A `u32` at `at`.
    #[inline(always)]
    fn u32(&self, at: usize) -> u32 {
        O::u32(self.array(at))
    }

    /// An `ElfN_Off`/`ElfN_Xword`-sized field (`u32` for ELF32, zero-extended).
    #[inline(always)]
    fn word(&self, at: usize, wide: bool) -> u64 {
        if wide {
            O::u64(self.array(at))
        } else {
            u64::from(self.u32(at))
        }
    }
}

/// Reader over an in-memory buffer: the `freader_init_from_mem()` mode, used for
/// `build_id_parse_buf()`.
///
/// Fetches are kept in place ([`Fetched::InReader`]), as C returns pointers into the
/// buffer.
#[derive(Clone, Copy, Debug)]
pub struct MemReader<'a> {
    data: &'a [u8],
    /// The bytes of the last fetch, inside `data`.
    kept: &'a [u8],
}

impl<'a> MemReader<'a> {
    /// Creates a reader over `data`; `r->data_sz` is `data.len()`.
    pub const fn new(data: &'a [u8]) -> Self {
        Self { data, kept: &[] }
    }
}

impl ReadAt for MemReader<'_> {
    /// `-ERANGE` exactly when C's `file_off + sz > r->data_sz` holds, evaluated like C:
    /// `loff_t + size_t` is computed in 64-bit unsigned arithmetic.
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result {
        // `usize` is at most 64 bits on every Linux target, so these are lossless.
        let data_sz = self.data.len() as u64;
        let sz = buf.len() as u64;
        if loff_as_u64(offset).wrapping_add(sz) > data_sz {
            return Err(ERANGE);
        }
        // The check above already implies `0 <= offset` and `offset + sz <= len` when
        // [`fetch`] ruled out wrap-around; if this reader is used directly with a
        // wrapping request (C would index out of bounds), fail with `-ERANGE` instead.
        let start = usize::try_from(offset).map_err(|_| ERANGE)?;
        let src = self
            .data
            .get(start..)
            .and_then(|tail| tail.get(..buf.len()))
            .ok_or(ERANGE)?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched> {
        self.kept = &[];
        // The same checks as `read_at`, without the copy.
        let data_sz = self.data.len() as u64;
        if loff_as_u64(offset).wrapping_add(buf.len() as u64) > data_sz {
            return Err(ERANGE);
        }
        let start = usize::try_from(offset).map_err(|_| ERANGE)?;
        self.kept = self
            .data
            .get(start..)
            .and_then(|tail| tail.get(..buf.len()))
            .ok_or(ERANGE)?;
        Ok(Fetched::InReader)
    }

    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        match self.kept.get(at..).and_then(|tail| tail.get(..dst.len())) {
            Some(src) => dst.copy_from_slice(src),
            None => dst.fill(0),
        }
    }
}

/// A parsed build ID: up to [`BUILD_ID_SIZE_MAX`] bytes, zero-padded to that size,
/// exactly as `parse_build_id()` leaves its `build_id` output buffer, plus the
/// descriptor size it stores in `*size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BuildId {
    bytes: [u8; BUILD_ID_SIZE_MAX],
    len: u32,
}

impl BuildId {
    /// Builds a [`BuildId`] from `id`, which must be 1..=20 bytes long (the only sizes
    /// the parser can produce); returns `None` otherwise.
    // The host crate's tests call it; the kernel does not.
    #[allow(dead_code)]
    pub fn new(id: &[u8]) -> Option<Self> {
        if id.is_empty() {
            return None;
        }
        let len = u32::try_from(id.len()).ok()?;
        let mut bytes = [0u8; BUILD_ID_SIZE_MAX];
        bytes.get_mut(..id.len())?.copy_from_slice(id);
        Some(Self { bytes, len })
    }

    /// The descriptor size, i.e. the value C stores in `*size` (1..=20).
    pub const fn size(&self) -> u32 {
        self.len
    }

    /// The build ID bytes, without padding.
    // The host crate's tests call it; the kernel does not.
    #[allow(dead_code)]
    pub fn as_bytes(&self) -> &[u8] {
        // `len <= BUILD_ID_SIZE_MAX` is an invariant; fall back to the whole buffer
        // rather than panicking.
        match usize::try_from(self.len) {
            Ok(n) => self.bytes.get(..n).unwrap_or(&self.bytes),
            Err(_) => &self.bytes,
        }
    }

    /// All 20 bytes, zero-padded after [`size()`](Self::size) bytes: what C writes
    /// to its `build_id` buffer.
    pub const fn padded(&self) -> &[u8; BUILD_ID_SIZE_MAX] {
        &self.bytes
    }
}

/// `freader_fetch()`: the checks every C mode performs, then the reader.
///
/// C computes `file_off + sz < file_off` with `loff_t` (`long long`) and `size_t`
/// (`unsigned long`) operands; the usual arithmetic conversions turn both into
/// `unsigned long long`, so this is a 64-bit unsigned wrap-around check, and a negative
/// `file_off` in `-sz..=-1` fails here with `-EOVERFLOW` while a more negative one is
/// passed on to the reader.
///
/// The `WARN_ON(r->buf && sz > r->buf_sz)` / `-E2BIG` check is mode-dependent (only
/// file-backed readers have a bounce buffer) and therefore belongs to the reader; the
/// parser never requests more than [`MAX_FREADER_BUF_SZ`] bytes.
// The host crate's tests call it; the kernel does not.
#[allow(dead_code)]
pub fn fetch<R: ReadAt + ?Sized>(reader: &mut R, file_off: i64, buf: &mut [u8]) -> Result {
    check_fetch(file_off, buf.len())?;
    reader.read_at(file_off, buf)
}

/// The wrap-around check of [`fetch`] (quirk 14).
fn check_fetch(file_off: i64, len: usize) -> Result {
    // Lossless: `usize` is at most 64 bits on Linux targets.
    let sz = len as u64;
    if loff_as_u64(file_off).checked_add(sz).is_none() {
        return Err(EOVERFLOW);
    }
    Ok(())
}

/// `__build_id_parse()`: parses the build ID of an ELF file.
///
/// Returns the build ID, or the error C would return: [`EINVAL`] for a file that
/// is not a supported ELF file or has no build ID note among the first [`MAX_NOTE_CNT`]
/// note headers of its `PT_NOTE` segments, or the reader's error for a
/// failed read of the ELF header or of a program header (quirk 1). Releasing reader
/// resources (C's `freader_cleanup()`) is left to the reader's `Drop`.
pub fn parse_elf<R: ReadAt + ?Sized>(reader: &mut R) -> Result<BuildId> {
    parse_elf_as::<NativeEndian, R>(reader)
}

/// [`parse_elf`], reading fields in byte order `O`.
pub fn parse_elf_as<O: ByteOrder, R: ReadAt + ?Sized>(reader: &mut R) -> Result<BuildId> {
    let mut r = Fetcher::new(reader);
    // Fetch the first 18 bytes of the ELF header for the class-independent checks (quirk 2).
    let ident = r.fetch::<O>(0, EHDR_PREFIX_SZ)?;

    // Compare magic "\x7fELF"; C compares the magic before anything else.
    if ident.array::<{ ELFMAG.len() }>(0) != ELFMAG {
        return Err(EINVAL);
    }

    // Only executables and shared objects (quirk 4); `e_type` is read in native byte
    // order (quirk 3).
    let e_type = ident.u16(E_TYPE_OFF);
    if e_type != ET_EXEC && e_type != ET_DYN {
        return Err(EINVAL);
    }

    let [class] = ident.array::<1>(EI_CLASS);
    match class {
        ELFCLASS32 => get_build_id::<false, O, R>(&mut r),
        ELFCLASS64 => get_build_id::<true, O, R>(&mut r),
        _ => Err(EINVAL),
    }
}

/// `parse_build_id()`: scans the notes in `note_size` bytes starting at `note_off`
/// for a GNU build ID note.
///
/// `note_off` has the C type `loff_t` and `note_size` the C type `Elf32_Word`; the
/// callers convert `p_offset` and `p_filesz` exactly like C (quirk 7). Returns the build
/// ID, [`EINVAL`] if none was found (or if `note_off + note_size` does not fit in
/// a `u32`, quirk 8, or if [`MAX_NOTE_CNT`] note headers were read without finding it),
/// or the reader's error for a failed note read.
///
/// Notes are padded to 4 bytes whatever the segment's `p_align` says, as in C (quirk 12).
// The host crate's tests call it; the kernel does not.
#[allow(dead_code)]
pub fn parse_notes<R: ReadAt + ?Sized>(
    reader: &mut R,
    note_off: i64,
    note_size: u32,
) -> Result<BuildId> {
    parse_notes_as::<NativeEndian, R>(reader, note_off, note_size)
}

/// [`parse_notes`], reading fields in byte order `O`.
pub fn parse_notes_as<O: ByteOrder, R: ReadAt + ?Sized>(
    reader: &mut R,
    note_off: i64,
    note_size: u32,
) -> Result<BuildId> {
    find_build_id_note::<O, R>(&mut Fetcher::new(reader), note_off, note_size)
}

/// [`parse_notes`] on the parser's view of the reader.
fn find_build_id_note<O: ByteOrder, R: ReadAt + ?Sized>(
    r: &mut Fetcher<'_, R>,
    note_off: i64,
    note_size: u32,
) -> Result<BuildId> {
    // check_add_overflow(note_off, note_size, &note_end) with a `u32` destination:
    // fails unless the mathematical sum is in 0..=u32::MAX (quirk 8). The i64 addition
    // itself can only overflow for sums far above u32::MAX, which fail the same way.
    let note_end = match note_off
        .checked_add(i64::from(note_size))
        .and_then(|end| u32::try_from(end).ok())
    {
        Some(end) => end,
        None => return Err(EINVAL),
    };

    let mut note_off = note_off;
    while note_remaining_exceeds_hdr(note_end, note_off) {
        if !r.take_note() {
            break;
        }
        // Always the header and a 4-byte name (quirk 9).
        let nhdr = r.fetch::<O>(note_off, NOTE_HDR_READ_SZ)?;

        let name_sz = nhdr.u32(0);
        let desc_sz = nhdr.u32(4);
        let n_type = nhdr.u32(8);
        let name = nhdr.array::<NOTE_NAME_SZ>(NHDR_SZ);

        // new_off = note_off + sizeof(Elf32_Nhdr): `loff_t + size_t` is evaluated in
        // 64-bit unsigned arithmetic and stored in a `u32` (quirk 11).
        let hdr_end = trunc_u32(loff_as_u64(note_off).wrapping_add(NHDR_SZ as u64));
        // check_add_overflow() on u32 for the (wrapping, quirk 10) aligned sizes, then the
        // bound.
        let new_off = match hdr_end
            .checked_add(align_u32(name_sz))
            .and_then(|off| off.checked_add(align_u32(desc_sz)))
        {
            Some(off) if off <= note_end => off,
            _ => break,
        };

        // Exactly "GNU\0", type 3, 1..=20 bytes of descriptor (quirk 13).
        if n_type == NT_GNU_BUILD_ID
            && name_sz as usize == NOTE_NAME_SZ
            && name == NOTE_NAME
            && (1..=BUILD_ID_SIZE_MAX as u32).contains(&desc_sz)
        {
            // build_id_off = note_off + sizeof(Elf32_Nhdr) + ALIGN(note_name_sz, 4),
            // again 64-bit arithmetic stored in a `u32` (quirk 11), then converted back
            // to loff_t.
            let build_id_off = trunc_u32(
                loff_as_u64(note_off)
                    .wrapping_add(NHDR_SZ as u64)
                    .wrapping_add(u64::from(align_u32(NOTE_NAME_SZ as u32))),
            );
            let mut bytes = [0u8; BUILD_ID_SIZE_MAX];
            // `desc_sz` is in 1..=20 here, so the slice always exists.
            let desc = bytes.get_mut(..desc_sz as usize).ok_or(EINVAL)?;
            r.fetch::<O>(i64::from(build_id_off), desc.len())?
                .copy(0, desc);
            // The tail of `bytes` is already zero: C's memset() of the padding.
            return Ok(BuildId {
                bytes,
                len: desc_sz,
            });
        }

        // u32 -> loff_t: zero extension.
        note_off = i64::from(new_off);
    }

    Err(EINVAL)
}

/// `build_id_parse_buf()`: parses the build ID from a buffer holding ELF note(s), as
/// used for the kernel's own `.notes` section.
///
/// C's `buf_size` is a `u32`: a buffer longer than `u32::MAX` bytes cannot be
/// expressed in C and is rejected with [`EINVAL`] (nothing could be found past
/// 4 GiB anyway). For every other input the result equals C's: [`EINVAL`] if no
/// build ID is found (the memory reader's [`ERANGE`] cannot occur with these
/// arguments because all reads stay within the buffer). C does not report the size
/// (`size == NULL`); it is available from [`BuildId::size`].
pub fn parse_buf(data: &[u8]) -> Result<BuildId> {
    parse_buf_as::<NativeEndian>(data)
}

/// [`parse_buf`], reading fields in byte order `O`.
pub fn parse_buf_as<O: ByteOrder>(data: &[u8]) -> Result<BuildId> {
    let buf_size = u32::try_from(data.len()).map_err(|_| EINVAL)?;
    parse_notes_as::<O, _>(&mut MemReader::new(data), 0, buf_size)
}

/// The loop condition of `parse_build_id()`:
/// `note_end - note_off > sizeof(Elf32_Nhdr) + note_name_sz`.
///
/// `note_end` (`u32`) is converted to `loff_t` for the subtraction, whose `s64` result
/// is compared against a `size_t`, i.e. converted to `u64` (a negative difference would
/// compare as a huge value; it cannot occur because `note_off <= note_end` holds on
/// entry and is maintained by the `new_off > note_end` check).
fn note_remaining_exceeds_hdr(note_end: u32, note_off: i64) -> bool {
    match i64::from(note_end).checked_sub(note_off) {
        Some(remaining) => loff_as_u64(remaining) > NOTE_HDR_READ_SZ as u64,
        // Unreachable (|note_off| < 2^33 here); C would have undefined behaviour.
        None => false,
    }
}

/// The per-class layout of the ELF header and program header fields the parser uses.
/// Offsets are those of `include/uapi/linux/elf.h`.
struct ElfLayout {
    /// `sizeof(ElfN_Ehdr)`.
    ehdr_sz: usize,
    /// Offset of `e_phoff`.
    e_phoff: usize,
    /// Whether `e_phoff`, `p_offset` and `p_filesz` are 64-bit fields.
    wide: bool,
    /// Offset of `e_phnum` (16-bit in both classes).
    e_phnum: usize,
    /// `sizeof(ElfN_Phdr)`.
    phdr_sz: usize,
    /// Offset of `p_offset`.
    p_offset: usize,
    /// Offset of `p_filesz`.
    p_filesz: usize,
}

/// `Elf32_Ehdr` / `Elf32_Phdr`.
const ELF32: ElfLayout = ElfLayout {
    ehdr_sz: 52,
    e_phoff: 28,
    wide: false,
    e_phnum: 44,
    phdr_sz: 32,
    p_offset: 4,
    p_filesz: 16,
};

/// `Elf64_Ehdr` / `Elf64_Phdr`.
const ELF64: ElfLayout = ElfLayout {
    ehdr_sz: 64,
    e_phoff: 32,
    wide: true,
    e_phnum: 56,
    phdr_sz: 56,
    p_offset: 8,
    p_filesz: 32,
};

/// `get_build_id_32()` (`WIDE` false) and `get_build_id_64()` (`WIDE` true), which only
/// differ in layout. As in C, each is compiled for its own layout, so sizes and offsets
/// are constants.
///
/// Reading the 32-bit fields zero-extended to 64 bits gives exactly the C semantics
/// for ELF32 too: `phoff + phnum * sizeof(Elf32_Phdr)` is evaluated as `size_t`
/// (64-bit) in C, and an `Elf32_Off` converts to a non-negative `loff_t`.
fn get_build_id<const WIDE: bool, O: ByteOrder, R: ReadAt + ?Sized>(
    r: &mut Fetcher<'_, R>,
) -> Result<BuildId> {
    let layout = if WIDE { &ELF64 } else { &ELF32 };
    let ehdr = r.fetch::<O>(0, layout.ehdr_sz)?;

    let phoff = ehdr.word(layout.e_phoff, layout.wide);
    // Set an upper bound on the number of segments (phdrs) we iterate (quirk 5).
    let phnum = core::cmp::min(u32::from(ehdr.u16(layout.e_phnum)), MAX_PHDR_CNT);
    let phdr_sz = layout.phdr_sz as u64;

    // Check that phoff is not large enough to cause an overflow (64-bit unsigned, as
    // in C, quirk 6; `phnum * phdr_sz` is at most 256 * 56 and cannot wrap).
    if phoff.wrapping_add(u64::from(phnum).wrapping_mul(phdr_sz)) < phoff {
        return Err(EINVAL);
    }

    for i in 0..phnum {
        // `phoff + i * sizeof(Elf_Phdr)` cannot wrap after the check above; the
        // conversion to the `loff_t` parameter may yield a negative offset (quirk 6).
        let off = phoff.wrapping_add(u64::from(i).wrapping_mul(phdr_sz));
        let phdr = r.fetch::<O>(u64_as_loff(off), layout.phdr_sz)?;

        if phdr.u32(0) == PT_NOTE {
            // `p_offset` to `loff_t`, `p_filesz` to `Elf32_Word` (quirk 7).
            let note_off = u64_as_loff(phdr.word(layout.p_offset, layout.wide));
            let note_size = trunc_u32(phdr.word(layout.p_filesz, layout.wide));
            // Any failure inside the segment, including read errors, just moves on to
            // the next program header (quirk 1).
            if let Ok(id) = find_build_id_note::<O, R>(r, note_off, note_size) {
                return Ok(id);
            }
        }
    }

    Err(EINVAL)
}

/// `ALIGN(x, 4)` on a `u32`: `(x + 3) & ~3` evaluated in `u32`, so it wraps to 0 for
/// `x >= 0xfffffffd`.
const fn align_u32(x: u32) -> u32 {
    x.wrapping_add(NOTE_ALIGN - 1) & !(NOTE_ALIGN - 1)
}

/// C conversion of an `loff_t` to an unsigned 64-bit type (modulo 2^64).
const fn loff_as_u64(x: i64) -> u64 {
    x as u64
}

/// C conversion of an unsigned 64-bit value to `loff_t` (GCC: modulo 2^64, so values
/// >= 2^63 become negative).
const fn u64_as_loff(x: u64) -> i64 {
    x as i64
}

/// C conversion of an unsigned 64-bit value to `u32` (modulo 2^32).
const fn trunc_u32(x: u64) -> u32 {
    x as u32
}
