// SPDX-License-Identifier: GPL-2.0

//! Pure, reader-agnostic ELF build ID parser.
//!
//! This is a line-by-line port of the parsing half of `lib/buildid.c` (Linux 6.12):
//! `__build_id_parse()`, `get_build_id_32()`, `get_build_id_64()`, `parse_build_id()`
//! and the mode-independent part of `freader_fetch()`. The way bytes are obtained
//! (page cache folios, `__kernel_read()`, a memory buffer) is abstracted behind the
//! [`ReadAt`] trait, so the same parser runs in the kernel (as `kernel::buildid::elf`)
//! and in the host test crate `tools/lib/buildid` (which includes this very file via
//! `#[path]` and compares it against the compiled C original).
//!
//! Constraints this file keeps, and why:
//!
//! - Only `core` is used (no `kernel::`, `alloc` or `std`), so the file compiles
//!   unchanged in both crates.
//! - There is no `unsafe` code (enforced by `forbid(unsafe_code)` below): every field
//!   is copied *by value* out of the reader (from where a fetch left the bytes, see
//!   [`ReadAt::fetch_at`]), so the parser never holds references into memory it does
//!   not own (the C code keeps pointers into folios and has to be careful about
//!   invalidating them; this port cannot get that wrong), and reads each field once.
//! - No operation can panic: the kernel builds with `overflow-checks` enabled, so every
//!   arithmetic operation is explicit. Where C checks for overflow we use `checked_*`;
//!   where C relies on the defined modular behaviour of unsigned arithmetic (or on
//!   GCC's modular conversion of out-of-range values to signed types) we use
//!   `wrapping_*` and the documented conversion helpers below. Buffer accesses go
//!   through `get()`/slice patterns, never through indexing that could panic.
//!
//! # Compatibility contract
//!
//! For every input, every function here returns exactly what its C counterpart
//! returns (`Ok` for 0, `Err(-errno)` otherwise, with the same errno) and produces the
//! same 20 build ID bytes and size, *provided the reader reports the same errors as the
//! C `freader` would for that mode*. It also issues the same sequence of reads (same
//! offsets and lengths, in the same order) as `freader_fetch()` hands to the
//! mode-specific code, which the host tests verify against the C original.
//!
//! # C behaviour reproduced on purpose (quirks)
//!
//! These are deliberately *not* fixed, because fixing any of them would change the
//! result for some input on which the C code is arguably right, and the goal of this
//! port is to be a drop-in replacement:
//!
//! 1. **Read errors inside a `PT_NOTE` segment are swallowed.** `get_build_id_{32,64}()`
//!    only check whether `parse_build_id()` returned 0, so an I/O error (or `-EFAULT`
//!    for a missing page in non-faulting mode) while reading a note is treated like
//!    "no build ID here" and the loop continues with the next program header; the final
//!    result is then `-EINVAL`. Read errors on the ELF header or on a program header,
//!    however, are returned as they are.
//! 2. **Two header reads.** The first 18 bytes (`offsetofend(Elf32_Ehdr, e_type)`) are
//!    read and checked first (magic, then `e_type`, then class), and then the full
//!    32- or 64-bit header is read again. A file of 18..=51 (ELF32) or 18..=63 (ELF64)
//!    bytes therefore fails with the *reader's* error (e.g. `-EIO` from a sleepable
//!    reader), not `-EINVAL`. (A non-faulting reader sees the page cache's zero fill
//!    past end of file instead, i.e. `e_phnum == 0`, and the result is `-EINVAL`.)
//! 3. **Only native little-endian layout.** `EI_DATA`, `EI_VERSION`, `e_machine` and
//!    `e_phentsize` are ignored; fields are read as little-endian (x86_64 native). A
//!    file that claims `ELFDATA2MSB` but has little-endian fields is accepted; a real
//!    big-endian file fails the `e_type` check (`0x0200 != ET_EXEC`).
//! 4. **Only `ET_EXEC` and `ET_DYN`.** `ET_REL`, `ET_CORE` etc. give `-EINVAL`; any
//!    `EI_CLASS` other than 1 or 2 gives `-EINVAL`.
//! 5. **At most 256 program headers** are looked at ([`MAX_PHDR_CNT`]); `e_phnum` is
//!    silently clamped (so a note in program header 256 is never found, and
//!    `PN_XNUM` is not special-cased).
//! 6. **Program header table overflow check in the C types.** C checks
//!    `phoff + phnum * sizeof(Elf_Phdr) < phoff` in 64-bit unsigned arithmetic (for
//!    ELF32 `phoff` is a `__u32` promoted to `size_t`, so the check can never fire; for
//!    ELF64 it catches a wrap-around past 2^64). An `e_phoff` of 2^63 or more that
//!    does not wrap is converted to a *negative* `loff_t` offset and handed to the
//!    reader, whose error is returned (e.g. `-EFAULT` from the non-faulting one;
//!    `__kernel_read()` leaves it to the file system, and tmpfs reads nothing, so
//!    `-EIO`).
//! 7. **`p_offset` is converted to `loff_t`, `p_filesz` to `Elf32_Word`.** For ELF64 a
//!    `p_offset` >= 2^63 becomes a negative note offset, and `p_filesz` is truncated to
//!    its low 32 bits (a segment of 4 GiB + 36 bytes is parsed as a 36-byte segment).
//! 8. **The note segment must end below 4 GiB.** `note_end` is a `u32` computed with
//!    `check_add_overflow(note_off, note_size, &note_end)`, which fails when the
//!    mathematical sum does not fit in `u32`. A negative `note_off` is accepted as long
//!    as `note_off + note_size` lands in `0..=u32::MAX`; the first header read then goes
//!    to the negative offset (and usually fails, see 1).
//! 9. **The 16-byte loop bound.** A note is only examined while *more than*
//!    `sizeof(Elf32_Nhdr) + sizeof("GNU")` = 16 bytes remain in the segment, and the
//!    header read is always 16 bytes (header plus a 4-byte name), even for notes with
//!    a shorter name. The difference `note_end - note_off` is computed in `loff_t`
//!    (the `u32` is converted to `s64`) and then compared as an unsigned `size_t`.
//! 10. **`ALIGN(x, 4)` on a `u32` wraps.** `n_namesz`/`n_descsz` values in
//!     `0xfffffffd..=0xffffffff` align to 0, so such a note is stepped over as if its
//!     name/descriptor were empty (the following bytes are then parsed as the next
//!     note header). Values that do not wrap but overflow `new_off` stop the scan.
//! 11. **Offsets are truncated to `u32`.** `new_off = note_off + sizeof(Elf32_Nhdr)` and
//!     the descriptor offset are computed in 64-bit arithmetic and stored in `u32`
//!     variables (modulo 2^32).
//! 12. **Notes are always 4-byte aligned.** 8-byte aligned notes (`p_align == 8`, as
//!     used for `.note.gnu.property`) are walked with 4-byte padding, so a build ID
//!     note that follows an 8-aligned note whose descriptor size is not a multiple
//!     of 8 is misparsed and usually not found. A possible improvement would be to
//!     honour `p_align == 8` for such segments; it is *not* implemented because it
//!     could change results for files the C code handles (a 4-aligned build ID note
//!     in a segment that declares `p_align == 8`), and it would need `p_align` to be
//!     threaded through; see the note on [`parse_notes`].
//! 13. **The build ID must be named exactly `"GNU\0"`** (`n_namesz == 4`), have
//!     `n_type == NT_GNU_BUILD_ID` (3) and a descriptor of 1..=20 bytes; the result is
//!     zero-padded to 20 bytes. A descriptor of 0 or more than 20 bytes is skipped and
//!     the scan continues with the next note.
//! 14. **`-EOVERFLOW` from the fetch wrapper** (offset + size wraps around 2^64) can
//!     only be produced by a header read at a note offset in `-16..=-1`; that error is
//!     then swallowed by rule 1, so [`parse_elf`] never returns `-EOVERFLOW`, but
//!     [`parse_notes`] can.

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

/// `EINVAL` (asm-generic value, identical on all Linux architectures).
pub const EINVAL: i32 = 22;
/// `E2BIG` (asm-generic value). Readers with a bounce buffer of
/// [`MAX_FREADER_BUF_SZ`] bytes return `-E2BIG` (the C code also `WARN_ON`s) when
/// asked for more; the parser never asks for more.
pub const E2BIG: i32 = 7;
/// `ERANGE` (asm-generic value), returned by [`MemReader`] for out-of-range reads.
pub const ERANGE: i32 = 34;
/// `EOVERFLOW` (value of `include/uapi/asm-generic/errno.h`, used by x86, arm64,
/// riscv and most other architectures; a kernel-side user should `static_assert` that
/// it matches the architecture's value).
pub const EOVERFLOW: i32 = 75;

/// `BUILD_ID_SIZE_MAX` from `include/linux/buildid.h`: the largest descriptor
/// accepted as a build ID, and the size of the zero-padded result.
pub const BUILD_ID_SIZE_MAX: usize = 20;
/// `MAX_PHDR_CNT`: upper bound on the number of program headers examined.
pub const MAX_PHDR_CNT: u32 = 256;
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
    /// `offset` is an `loff_t` and may be negative (see the quirks in the module
    /// documentation); implementations must reject such offsets with the same errno
    /// as the C `freader` mode they model. On failure, return the negative errno the
    /// corresponding C mode would store in `r->err` (e.g. `-EIO` for a short
    /// `__kernel_read()`, `-EFAULT` for a page missing from the page cache, `-ERANGE`
    /// for a memory buffer). The contents of `buf` after a failure are unspecified and
    /// are never used. Returning a non-negative error value is a contract violation
    /// (the parser passes it through unchanged).
    ///
    /// The parser (or [`fetch`]) has already rejected requests for which
    /// `offset + buf.len()` wraps around in 64-bit unsigned arithmetic before this, or
    /// [`ReadAt::fetch_at`], is called.
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32>;

    /// Makes the `buf.len()` bytes at `offset` available to the parser, which then reads the
    /// few fields it needs from them: what C's `freader_fetch()` does when it returns a
    /// pointer into the folio instead of copying.
    ///
    /// A reader either copies the bytes into `buf` and returns [`Fetched::InBuffer`] (the
    /// default, with [`ReadAt::read_at`]), or keeps them where they are, returns
    /// [`Fetched::InReader`] and serves [`ReadAt::read_fetched`] until it is called again.
    /// Either way it fails exactly when `read_at` would, with the same error.
    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched, i32> {
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

/// C's `struct freader` as the parser sees it: the reader, the buffer a fetch may be copied
/// into, and where the bytes of the last fetch are. Fields are read from the last fetch by
/// value.
struct Fetcher<'r, R: ?Sized> {
    reader: &'r mut R,
    buf: [u8; MAX_FREADER_BUF_SZ],
    /// The length of the last fetch; 0 before the first one and after a failed one.
    len: usize,
    kept: Fetched,
}

impl<'r, R: ReadAt + ?Sized> Fetcher<'r, R> {
    fn new(reader: &'r mut R) -> Self {
        Self {
            reader,
            buf: [0; MAX_FREADER_BUF_SZ],
            len: 0,
            kept: Fetched::InBuffer,
        }
    }

    /// `freader_fetch()` of `len` bytes at `file_off`: [`fetch`]'s checks, then
    /// [`ReadAt::fetch_at`].
    #[inline(always)]
    fn fetch(&mut self, file_off: i64, len: usize) -> Result<(), i32> {
        self.len = 0;
        check_fetch(file_off, len)?;
        // The parser never asks for more than the buffer holds (see the assertions on
        // `MAX_FREADER_BUF_SZ`): C's `WARN_ON()` path.
        let buf = self.buf.get_mut(..len).ok_or(-E2BIG)?;
        self.kept = self.reader.fetch_at(file_off, buf)?;
        self.len = len;
        Ok(())
    }

    /// Copies bytes `at..at + dst.len()` of the last fetch; zeroes where that range is not
    /// inside it (which the constant in-bounds offsets used in this file never cause).
    #[inline(always)]
    fn copy(&self, at: usize, dst: &mut [u8]) {
        match self.kept {
            // The reader checks the range.
            Fetched::InReader => self.reader.read_fetched(at, dst),
            Fetched::InBuffer => {
                let src = self
                    .buf
                    .get(..self.len)
                    .and_then(|fetched| fetched.get(at..))
                    .and_then(|tail| tail.get(..dst.len()));
                match src {
                    Some(src) => dst.copy_from_slice(src),
                    None => dst.fill(0),
                }
            }
        }
    }

    /// Bytes `at..at + N` of the last fetch.
    #[inline(always)]
    fn array<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut out = [0u8; N];
        self.copy(at, &mut out);
        out
    }

    /// A native-endian (little-endian) `u16` at `at`.
    #[inline(always)]
    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes(self.array(at))
    }

    /// A native-endian (little-endian) `u32` at `at`.
    #[inline(always)]
    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.array(at))
    }

    /// An `ElfN_Off`/`ElfN_Xword`-sized field (`u32` for ELF32, zero-extended).
    #[inline(always)]
    fn word(&self, at: usize, wide: bool) -> u64 {
        if wide {
            u64::from_le_bytes(self.array(at))
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
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<(), i32> {
        // `usize` is at most 64 bits on every Linux target, so these are lossless.
        let data_sz = self.data.len() as u64;
        let sz = buf.len() as u64;
        if loff_as_u64(offset).wrapping_add(sz) > data_sz {
            return Err(-ERANGE);
        }
        // The check above already implies `0 <= offset` and `offset + sz <= len` when
        // [`fetch`] ruled out wrap-around; if this reader is used directly with a
        // wrapping request (C would index out of bounds), fail with `-ERANGE` instead.
        let start = usize::try_from(offset).map_err(|_| -ERANGE)?;
        let src = self
            .data
            .get(start..)
            .and_then(|tail| tail.get(..buf.len()))
            .ok_or(-ERANGE)?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched, i32> {
        self.kept = &[];
        // The same checks as `read_at`, without the copy.
        let data_sz = self.data.len() as u64;
        if loff_as_u64(offset).wrapping_add(buf.len() as u64) > data_sz {
            return Err(-ERANGE);
        }
        let start = usize::try_from(offset).map_err(|_| -ERANGE)?;
        self.kept = self
            .data
            .get(start..)
            .and_then(|tail| tail.get(..buf.len()))
            .ok_or(-ERANGE)?;
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
pub fn fetch<R: ReadAt + ?Sized>(reader: &mut R, file_off: i64, buf: &mut [u8]) -> Result<(), i32> {
    check_fetch(file_off, buf.len())?;
    reader.read_at(file_off, buf)
}

/// The wrap-around check of [`fetch`].
fn check_fetch(file_off: i64, len: usize) -> Result<(), i32> {
    // Lossless: `usize` is at most 64 bits on Linux targets.
    let sz = len as u64;
    if loff_as_u64(file_off).checked_add(sz).is_none() {
        return Err(-EOVERFLOW);
    }
    Ok(())
}

/// `__build_id_parse()`: parses the build ID of an ELF file.
///
/// Returns the build ID, or the negative errno C would return: `-EINVAL` for a file
/// that is not a supported ELF file or has no build ID note, or the reader's error
/// for a failed read of the ELF header or of a program header (see the quirks in the
/// module documentation). Releasing reader resources (C's `freader_cleanup()`) is left
/// to the reader's `Drop`.
pub fn parse_elf<R: ReadAt + ?Sized>(reader: &mut R) -> Result<BuildId, i32> {
    let mut r = Fetcher::new(reader);
    // Fetch the first 18 bytes of the ELF header for the class-independent checks.
    r.fetch(0, EHDR_PREFIX_SZ)?;
    let ident = &r;

    // Compare magic "\x7fELF"; C compares the magic before anything else.
    if ident.array::<{ ELFMAG.len() }>(0) != ELFMAG {
        return Err(-EINVAL);
    }

    // Only executables and shared objects; `e_type` is read in native (little) endian.
    let e_type = ident.u16(E_TYPE_OFF);
    if e_type != ET_EXEC && e_type != ET_DYN {
        return Err(-EINVAL);
    }

    let [class] = ident.array::<1>(EI_CLASS);
    match class {
        ELFCLASS32 => get_build_id::<false, R>(&mut r),
        ELFCLASS64 => get_build_id::<true, R>(&mut r),
        _ => Err(-EINVAL),
    }
}

/// `parse_build_id()`: scans the notes in `note_size` bytes starting at `note_off`
/// for a GNU build ID note.
///
/// `note_off` has the C type `loff_t` and `note_size` the C type `Elf32_Word`; the
/// callers convert `p_offset` and `p_filesz` exactly like C (see [`parse_elf`]).
/// Returns the build ID, `-EINVAL` if none was found (or if `note_off + note_size`
/// does not fit in a `u32`), or the reader's error for a failed note read.
///
/// Note on a possible improvement: honouring `p_align == 8` for note padding (as
/// binutils does) is intentionally not implemented, because this function does not
/// know the segment's `p_align` in C either and changing the padding would change
/// results for inputs C handles correctly; see quirk 12 in the module documentation.
pub fn parse_notes<R: ReadAt + ?Sized>(
    reader: &mut R,
    note_off: i64,
    note_size: u32,
) -> Result<BuildId, i32> {
    find_build_id_note(&mut Fetcher::new(reader), note_off, note_size)
}

/// [`parse_notes`] on the parser's view of the reader.
fn find_build_id_note<R: ReadAt + ?Sized>(
    r: &mut Fetcher<'_, R>,
    note_off: i64,
    note_size: u32,
) -> Result<BuildId, i32> {
    // check_add_overflow(note_off, note_size, &note_end) with a `u32` destination:
    // fails unless the mathematical sum is in 0..=u32::MAX. The i64 addition itself
    // can only overflow for sums far above u32::MAX, which fail the same way.
    let note_end = match note_off
        .checked_add(i64::from(note_size))
        .and_then(|end| u32::try_from(end).ok())
    {
        Some(end) => end,
        None => return Err(-EINVAL),
    };

    let mut note_off = note_off;
    while note_remaining_exceeds_hdr(note_end, note_off) {
        r.fetch(note_off, NOTE_HDR_READ_SZ)?;
        let nhdr = &*r;

        let name_sz = nhdr.u32(0);
        let desc_sz = nhdr.u32(4);
        let n_type = nhdr.u32(8);
        let name = nhdr.array::<NOTE_NAME_SZ>(NHDR_SZ);

        // new_off = note_off + sizeof(Elf32_Nhdr): `loff_t + size_t` is evaluated in
        // 64-bit unsigned arithmetic and stored in a `u32` (truncation).
        let hdr_end = trunc_u32(loff_as_u64(note_off).wrapping_add(NHDR_SZ as u64));
        // check_add_overflow() on u32 for the (wrapping) aligned sizes, then the bound.
        let new_off = match hdr_end
            .checked_add(align_u32(name_sz))
            .and_then(|off| off.checked_add(align_u32(desc_sz)))
        {
            Some(off) if off <= note_end => off,
            _ => break,
        };

        if n_type == NT_GNU_BUILD_ID
            && name_sz as usize == NOTE_NAME_SZ
            && name == NOTE_NAME
            && (1..=BUILD_ID_SIZE_MAX as u32).contains(&desc_sz)
        {
            // build_id_off = note_off + sizeof(Elf32_Nhdr) + ALIGN(note_name_sz, 4),
            // again 64-bit arithmetic stored in a `u32`, then converted back to loff_t.
            let build_id_off = trunc_u32(
                loff_as_u64(note_off)
                    .wrapping_add(NHDR_SZ as u64)
                    .wrapping_add(u64::from(align_u32(NOTE_NAME_SZ as u32))),
            );
            let mut bytes = [0u8; BUILD_ID_SIZE_MAX];
            // `desc_sz` is in 1..=20 here, so the slice always exists.
            let desc = bytes.get_mut(..desc_sz as usize).ok_or(-EINVAL)?;
            r.fetch(i64::from(build_id_off), desc.len())?;
            r.copy(0, desc);
            // The tail of `bytes` is already zero: C's memset() of the padding.
            return Ok(BuildId {
                bytes,
                len: desc_sz,
            });
        }

        // u32 -> loff_t: zero extension.
        note_off = i64::from(new_off);
    }

    Err(-EINVAL)
}

/// `build_id_parse_buf()`: parses the build ID from a buffer holding ELF note(s), as
/// used for the kernel's own `.notes` section.
///
/// C's `buf_size` is a `u32`: a buffer longer than `u32::MAX` bytes cannot be
/// expressed in C and is rejected with `-EINVAL` (nothing could be found past 4 GiB
/// anyway). For every other input the result equals C's: `-EINVAL` if no build ID is
/// found (the memory reader's `-ERANGE` cannot occur with these arguments because all
/// reads stay within the buffer). C does not report the size (`size == NULL`); it is
/// available from [`BuildId::size`].
pub fn parse_buf(data: &[u8]) -> Result<BuildId, i32> {
    let buf_size = u32::try_from(data.len()).map_err(|_| -EINVAL)?;
    parse_notes(&mut MemReader::new(data), 0, buf_size)
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
fn get_build_id<const WIDE: bool, R: ReadAt + ?Sized>(
    r: &mut Fetcher<'_, R>,
) -> Result<BuildId, i32> {
    let layout = if WIDE { &ELF64 } else { &ELF32 };
    r.fetch(0, layout.ehdr_sz)?;
    let ehdr = &*r;

    let phoff = ehdr.word(layout.e_phoff, layout.wide);
    // Set an upper bound on the number of segments (phdrs) we iterate.
    let phnum = core::cmp::min(u32::from(ehdr.u16(layout.e_phnum)), MAX_PHDR_CNT);
    let phdr_sz = layout.phdr_sz as u64;

    // Check that phoff is not large enough to cause an overflow (64-bit unsigned, as
    // in C; `phnum * phdr_sz` is at most 256 * 56 and cannot wrap).
    if phoff.wrapping_add(u64::from(phnum).wrapping_mul(phdr_sz)) < phoff {
        return Err(-EINVAL);
    }

    for i in 0..phnum {
        // `phoff + i * sizeof(Elf_Phdr)` cannot wrap after the check above; the
        // conversion to the `loff_t` parameter may yield a negative offset.
        let off = phoff.wrapping_add(u64::from(i).wrapping_mul(phdr_sz));
        r.fetch(u64_as_loff(off), layout.phdr_sz)?;
        let phdr = &*r;

        if phdr.u32(0) == PT_NOTE {
            let note_off = u64_as_loff(phdr.word(layout.p_offset, layout.wide));
            let note_size = trunc_u32(phdr.word(layout.p_filesz, layout.wide));
            // Any failure inside the segment, including read errors, just moves on to
            // the next program header (quirk 1).
            if let Ok(id) = find_build_id_note(r, note_off, note_size) {
                return Ok(id);
            }
        }
    }

    Err(-EINVAL)
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
