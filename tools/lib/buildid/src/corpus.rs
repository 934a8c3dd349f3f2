// SPDX-License-Identifier: GPL-2.0

//! A tiny ELF/note image builder and the crafted corpus.
//!
//! Every corpus case states the expected result of each check (an exact errno, or the
//! exact build ID bytes and size), derived by hand from the C code; the tests check
//! both the C original and the Rust port against it. The builder also records where
//! each header field lives, so the fuzzer can mutate fields rather than random bytes.

use crate::check::{Call, Reader};
use crate::cref::{Mode, Outcome, SENTINEL_BYTE, SENTINEL_SIZE};
use crate::elf::BUILD_ID_SIZE_MAX;
use crate::model::{FileModel, Folio};
use kernel::error::{code::*, Error};

/// `PT_LOAD`.
pub const PT_LOAD: u32 = 1;
/// `PT_NOTE`.
pub const PT_NOTE: u32 = 4;
/// `NT_GNU_ABI_TAG`.
pub const NT_GNU_ABI_TAG: u32 = 1;
/// `NT_GNU_BUILD_ID`.
pub const NT_GNU_BUILD_ID: u32 = 3;
/// `NT_GNU_PROPERTY_TYPE_0`.
pub const NT_GNU_PROPERTY_TYPE_0: u32 = 5;
/// Images are never made larger than this (phdr tables further out are not written).
const MAX_IMAGE: u64 = 1 << 22;

/// Kind of a recorded field, for structure-aware mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// `e_ident[EI_MAG0..4]`.
    Magic,
    /// `e_ident[EI_CLASS]`.
    Class,
    /// `e_ident[EI_DATA]`.
    Data,
    /// `e_type`.
    EType,
    /// `e_phoff`.
    PhOff,
    /// `e_phentsize`.
    PhEntSize,
    /// `e_phnum`.
    PhNum,
    /// `p_type`.
    PType,
    /// `p_offset`.
    POffset,
    /// `p_filesz`.
    PFilesz,
    /// `p_align`.
    PAlign,
    /// `n_namesz`.
    NameSz,
    /// `n_descsz`.
    DescSz,
    /// `n_type`.
    NType,
    /// First four name bytes.
    NoteName,
}

/// Location of a header field in a built image.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Byte offset.
    pub off: usize,
    /// Width in bytes (1, 2, 4 or 8).
    pub width: usize,
    /// What it is.
    pub kind: FieldKind,
}

/// A built image and its field map.
#[derive(Clone, Debug)]
pub struct Built {
    /// The image.
    pub bytes: Vec<u8>,
    /// Fields, in file order of construction.
    pub fields: Vec<Field>,
}

/// A program header to emit.
#[derive(Clone, Copy, Debug)]
pub struct Phdr {
    /// `p_type`.
    pub p_type: u32,
    /// `p_offset` (truncated to 32 bits for ELF32).
    pub p_offset: u64,
    /// `p_filesz` (truncated to 32 bits for ELF32).
    pub p_filesz: u64,
    /// `p_align`.
    pub p_align: u64,
}

#[derive(Clone, Debug)]
struct Blob {
    off: usize,
    bytes: Vec<u8>,
    notes: bool,
}

/// ELF image builder (little-endian, x86 machine numbers).
#[derive(Clone, Debug)]
pub struct Elf {
    wide: bool,
    ident: [u8; 16],
    e_type: u16,
    phoff: u64,
    phnum: Option<u16>,
    phentsize: Option<u16>,
    phdrs: Vec<Phdr>,
    blobs: Vec<Blob>,
    len: Option<usize>,
}

impl Elf {
    fn new(wide: bool) -> Self {
        let mut ident = [0u8; 16];
        ident[..4].copy_from_slice(b"\x7fELF");
        ident[4] = if wide { 2 } else { 1 };
        ident[5] = 1; // ELFDATA2LSB
        ident[6] = 1; // EV_CURRENT
        Self {
            wide,
            ident,
            e_type: 2,
            phoff: if wide { 64 } else { 52 },
            phnum: None,
            phentsize: None,
            phdrs: Vec::new(),
            blobs: Vec::new(),
            len: None,
        }
    }

    /// An `ET_EXEC` ELF64 file with no program headers (yet).
    pub fn new64() -> Self {
        Self::new(true)
    }

    /// An `ET_EXEC` ELF32 file with no program headers (yet).
    pub fn new32() -> Self {
        Self::new(false)
    }

    /// `sizeof(ElfN_Ehdr)`.
    pub fn ehdr_size(&self) -> usize {
        if self.wide {
            64
        } else {
            52
        }
    }

    /// `sizeof(ElfN_Phdr)`.
    pub fn phdr_size(&self) -> usize {
        if self.wide {
            56
        } else {
            32
        }
    }

    /// Sets `e_ident[idx]`.
    pub fn ident(mut self, idx: usize, value: u8) -> Self {
        self.ident[idx] = value;
        self
    }

    /// Sets `e_type`.
    pub fn e_type(mut self, t: u16) -> Self {
        self.e_type = t;
        self
    }

    /// Sets `e_phoff` (default: right after the ELF header).
    pub fn phoff(mut self, off: u64) -> Self {
        self.phoff = off;
        self
    }

    /// Overrides `e_phnum` (default: number of program headers added).
    pub fn phnum(mut self, n: u16) -> Self {
        self.phnum = Some(n);
        self
    }

    /// Overrides `e_phentsize`.
    pub fn phentsize(mut self, n: u16) -> Self {
        self.phentsize = Some(n);
        self
    }

    /// Adds a program header.
    pub fn phdr(self, p_type: u32, p_offset: u64, p_filesz: u64) -> Self {
        self.phdr_aligned(p_type, p_offset, p_filesz, 4)
    }

    /// Adds a program header with an explicit `p_align`.
    pub fn phdr_aligned(mut self, p_type: u32, p_offset: u64, p_filesz: u64, p_align: u64) -> Self {
        self.phdrs.push(Phdr {
            p_type,
            p_offset,
            p_filesz,
            p_align,
        });
        self
    }

    /// Places `notes` at `off` and adds a `PT_NOTE` covering exactly them.
    pub fn note_segment(self, off: usize, notes: Vec<u8>) -> Self {
        let len = notes.len() as u64;
        self.put_notes(off, notes).phdr(PT_NOTE, off as u64, len)
    }

    /// Places raw bytes at `off`.
    pub fn put(mut self, off: usize, bytes: Vec<u8>) -> Self {
        self.blobs.push(Blob {
            off,
            bytes,
            notes: false,
        });
        self
    }

    /// Places note bytes at `off` (recorded as note fields for mutation).
    pub fn put_notes(mut self, off: usize, bytes: Vec<u8>) -> Self {
        self.blobs.push(Blob {
            off,
            bytes,
            notes: true,
        });
        self
    }

    /// Truncates or zero-extends the image to `len` bytes.
    pub fn len(mut self, len: usize) -> Self {
        self.len = Some(len);
        self
    }

    /// The image bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.build().bytes
    }

    /// Builds the image and its field map.
    pub fn build(&self) -> Built {
        let (ehsz, phsz) = (self.ehdr_size(), self.phdr_size());
        let table = self.phdrs.len() as u64 * phsz as u64;
        let table_end = self.phoff.checked_add(table).filter(|e| *e <= MAX_IMAGE);
        let mut natural = ehsz.max(table_end.unwrap_or(0) as usize);
        for b in &self.blobs {
            natural = natural.max(b.off + b.bytes.len());
        }
        let mut img = vec![0u8; natural];
        let mut fields = vec![
            Field {
                off: 0,
                width: 4,
                kind: FieldKind::Magic,
            },
            Field {
                off: 4,
                width: 1,
                kind: FieldKind::Class,
            },
            Field {
                off: 5,
                width: 1,
                kind: FieldKind::Data,
            },
        ];
        let mut put =
            |img: &mut Vec<u8>, off: usize, width: usize, value: u64, kind: Option<FieldKind>| {
                img[off..off + width].copy_from_slice(&value.to_le_bytes()[..width]);
                if let Some(kind) = kind {
                    fields.push(Field { off, width, kind });
                }
            };

        img[..16].copy_from_slice(&self.ident);
        put(&mut img, 16, 2, self.e_type.into(), Some(FieldKind::EType));
        put(&mut img, 18, 2, if self.wide { 62 } else { 3 }, None);
        put(&mut img, 20, 4, 1, None);
        let phentsize = self.phentsize.unwrap_or(phsz as u16).into();
        let phnum = self.phnum.unwrap_or(self.phdrs.len() as u16).into();
        if self.wide {
            put(&mut img, 32, 8, self.phoff, Some(FieldKind::PhOff));
            put(&mut img, 52, 2, 64, None);
            put(&mut img, 54, 2, phentsize, Some(FieldKind::PhEntSize));
            put(&mut img, 56, 2, phnum, Some(FieldKind::PhNum));
        } else {
            put(
                &mut img,
                28,
                4,
                self.phoff & 0xffff_ffff,
                Some(FieldKind::PhOff),
            );
            put(&mut img, 40, 2, 52, None);
            put(&mut img, 42, 2, phentsize, Some(FieldKind::PhEntSize));
            put(&mut img, 44, 2, phnum, Some(FieldKind::PhNum));
        }

        if table_end.is_some() {
            for (i, p) in self.phdrs.iter().enumerate() {
                let o = self.phoff as usize + i * phsz;
                let m32 = 0xffff_ffff;
                if self.wide {
                    put(&mut img, o, 4, p.p_type.into(), Some(FieldKind::PType));
                    put(&mut img, o + 4, 4, 4, None);
                    put(&mut img, o + 8, 8, p.p_offset, Some(FieldKind::POffset));
                    put(&mut img, o + 16, 8, p.p_offset, None);
                    put(&mut img, o + 24, 8, p.p_offset, None);
                    put(&mut img, o + 32, 8, p.p_filesz, Some(FieldKind::PFilesz));
                    put(&mut img, o + 40, 8, p.p_filesz, None);
                    put(&mut img, o + 48, 8, p.p_align, Some(FieldKind::PAlign));
                } else {
                    put(&mut img, o, 4, p.p_type.into(), Some(FieldKind::PType));
                    put(
                        &mut img,
                        o + 4,
                        4,
                        p.p_offset & m32,
                        Some(FieldKind::POffset),
                    );
                    put(&mut img, o + 8, 4, p.p_offset & m32, None);
                    put(&mut img, o + 12, 4, p.p_offset & m32, None);
                    put(
                        &mut img,
                        o + 16,
                        4,
                        p.p_filesz & m32,
                        Some(FieldKind::PFilesz),
                    );
                    put(&mut img, o + 20, 4, p.p_filesz & m32, None);
                    put(&mut img, o + 24, 4, 4, None);
                    put(
                        &mut img,
                        o + 28,
                        4,
                        p.p_align & m32,
                        Some(FieldKind::PAlign),
                    );
                }
            }
        }

        for b in &self.blobs {
            img[b.off..b.off + b.bytes.len()].copy_from_slice(&b.bytes);
            if b.notes {
                fields.extend(note_fields(&b.bytes, b.off));
            }
        }
        if let Some(len) = self.len {
            img.resize(len, 0);
            fields.retain(|f| f.off + f.width <= len);
        }
        Built { bytes: img, fields }
    }
}

impl Built {
    /// The image as a machine of the other byte order would write it: every multi-byte
    /// field the parser reads (and the others the builder records) with its bytes
    /// reversed. Magic, class and note names are bytes, and stay as they are.
    pub fn byte_swapped(&self) -> Vec<u8> {
        byte_swapped(&self.bytes, &self.fields)
    }
}

/// `bytes` with the multi-byte numeric `fields` reversed; see [`Built::byte_swapped`].
pub fn byte_swapped(bytes: &[u8], fields: &[Field]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for f in fields {
        let numeric = !matches!(
            f.kind,
            FieldKind::Magic | FieldKind::Class | FieldKind::Data | FieldKind::NoteName
        );
        if let Some(field) = out.get_mut(f.off..f.off + f.width) {
            if numeric {
                field.reverse();
            }
        }
    }
    out
}

/// Field map of a sequence of 4-aligned notes placed at `base` (a test-side walker,
/// independent of the parser under test).
pub fn note_fields(notes: &[u8], base: usize) -> Vec<Field> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p + 12 <= notes.len() {
        let rd = |o: usize| u32::from_le_bytes(notes[o..o + 4].try_into().unwrap()) as usize;
        let (namesz, descsz) = (rd(p), rd(p + 4));
        out.push(Field {
            off: base + p,
            width: 4,
            kind: FieldKind::NameSz,
        });
        out.push(Field {
            off: base + p + 4,
            width: 4,
            kind: FieldKind::DescSz,
        });
        out.push(Field {
            off: base + p + 8,
            width: 4,
            kind: FieldKind::NType,
        });
        if p + 16 <= notes.len() {
            out.push(Field {
                off: base + p + 12,
                width: 4,
                kind: FieldKind::NoteName,
            });
        }
        // Sizes are aligned like C's `ALIGN()` on a `u32`, which wraps to 0 (quirk 10).
        let align = |x: usize| (x as u32).wrapping_add(3) as usize & !3;
        let step = 12usize
            .checked_add(align(namesz))
            .and_then(|s| s.checked_add(align(descsz)));
        match step.and_then(|s| p.checked_add(s)) {
            Some(next) if next > p => p = next,
            _ => break,
        }
    }
    out
}

/// One ELF note: header, `name` padded to `align`, `desc` padded to `align`. The size
/// fields are given explicitly so they can lie.
pub fn note(
    namesz: u32,
    name: &[u8],
    n_type: u32,
    descsz: u32,
    desc: &[u8],
    align: usize,
) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&namesz.to_le_bytes());
    v.extend_from_slice(&descsz.to_le_bytes());
    v.extend_from_slice(&n_type.to_le_bytes());
    v.extend_from_slice(name);
    v.resize(v.len().next_multiple_of(align), 0);
    v.extend_from_slice(desc);
    v.resize(v.len().next_multiple_of(align), 0);
    v
}

/// A `"GNU"` note of the given type, 4-byte aligned.
pub fn gnu_note(n_type: u32, desc: &[u8]) -> Vec<u8> {
    note(4, b"GNU\0", n_type, desc.len() as u32, desc, 4)
}

/// A GNU build ID note.
pub fn build_id_note(id: &[u8]) -> Vec<u8> {
    gnu_note(NT_GNU_BUILD_ID, id)
}

/// A typical `NT_GNU_ABI_TAG` note (32 bytes).
pub fn abi_tag_note() -> Vec<u8> {
    gnu_note(
        NT_GNU_ABI_TAG,
        &[0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0],
    )
}

/// `n` distinctive, non-zero ID bytes.
pub fn id(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| seed.wrapping_add((i as u8).wrapping_mul(37)) | 1)
        .collect()
}

/// Expected result of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Success with exactly these ID bytes (size = their length).
    Id(Vec<u8>),
    /// Failure with this error.
    Err(Error),
}

impl Expect {
    /// The expected C-convention outcome of `call`.
    pub fn outcome(&self, call: Call) -> Outcome {
        match self {
            Expect::Err(e) => Outcome {
                ret: e.to_errno(),
                id: [SENTINEL_BYTE; BUILD_ID_SIZE_MAX],
                size: SENTINEL_SIZE,
            },
            Expect::Id(bytes) => {
                let mut id = [0u8; BUILD_ID_SIZE_MAX];
                id[..bytes.len()].copy_from_slice(bytes);
                let size = if call == Call::Buf {
                    SENTINEL_SIZE
                } else {
                    bytes.len() as u32
                };
                Outcome { ret: 0, id, size }
            }
        }
    }
}

/// Shorthand for [`Expect::Id`].
pub fn ok(id: &[u8]) -> Expect {
    Expect::Id(id.to_vec())
}

/// Shorthand for [`Expect::Err`].
pub fn err(errno: Error) -> Expect {
    Expect::Err(errno)
}

/// Page cache set-up for a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cache {
    /// 4 KiB folios, all cached.
    All,
    /// Folios of this size, all cached.
    FolioSize(u64),
    /// 4 KiB folios; only these are cached (and uptodate).
    Only(Vec<u64>),
    /// 4 KiB folios, all cached, but these are not uptodate.
    NotUptodate(Vec<u64>),
}

/// One check of a case.
#[derive(Clone, Debug)]
pub struct Check {
    /// Page cache set-up.
    pub cache: Cache,
    /// What to call.
    pub call: Call,
    /// Expected result.
    pub expect: Expect,
    /// Expected sleepable read sequence, if pinned down.
    pub trace: Option<Vec<(i64, u64)>>,
}

/// A corpus case: input bytes plus checks.
#[derive(Clone, Debug)]
pub struct Case {
    /// Name (also the test name).
    pub name: &'static str,
    /// File (or buffer) contents.
    pub data: Vec<u8>,
    /// Whether the file is a secretmem mapping.
    pub secretmem: bool,
    /// Field map, for the fuzzer.
    pub fields: Vec<Field>,
    /// Checks.
    pub checks: Vec<Check>,
}

impl Case {
    /// A case over the given image.
    pub fn new(name: &'static str, built: Built) -> Self {
        Self {
            name,
            data: built.bytes,
            secretmem: false,
            fields: built.fields,
            checks: Vec::new(),
        }
    }

    /// A case over raw bytes (e.g. a note buffer).
    pub fn raw(name: &'static str, data: Vec<u8>) -> Self {
        let fields = note_fields(&data, 0);
        Self {
            name,
            data,
            secretmem: false,
            fields,
            checks: Vec::new(),
        }
    }

    fn with(mut self, cache: Cache, call: Call, expect: Expect) -> Self {
        self.checks.push(Check {
            cache,
            call,
            expect,
            trace: None,
        });
        self
    }

    /// Expect `expect` from both `__build_id_parse()` modes (fully cached).
    pub fn elf(self, expect: Expect) -> Self {
        self.sleepable(expect.clone()).nofault(expect)
    }

    /// Expect `expect` from `__build_id_parse()` in sleepable mode.
    pub fn sleepable(self, expect: Expect) -> Self {
        self.with(Cache::All, Call::ParseElf(Mode::Sleepable), expect)
    }

    /// Expect `expect` and exactly the reads in `trace` in sleepable mode.
    pub fn sleepable_trace(mut self, expect: Expect, trace: &[(i64, u64)]) -> Self {
        self = self.sleepable(expect);
        self.checks.last_mut().unwrap().trace = Some(trace.to_vec());
        self
    }

    /// Expect `expect` from `__build_id_parse()` in non-faulting mode, fully cached.
    pub fn nofault(self, expect: Expect) -> Self {
        self.with(Cache::All, Call::ParseElf(Mode::Nofault), expect)
    }

    /// Expect `expect` in non-faulting mode with the given page cache.
    pub fn nofault_cache(self, cache: Cache, expect: Expect) -> Self {
        self.with(cache, Call::ParseElf(Mode::Nofault), expect)
    }

    /// Expect `expect` from `build_id_parse_buf()` over the whole data.
    pub fn buf(self, expect: Expect) -> Self {
        self.with(Cache::All, Call::Buf, expect)
    }

    /// Expect `expect` from `parse_build_id()` on `reader`.
    pub fn notes(self, reader: Reader, off: i64, size: u32, expect: Expect) -> Self {
        self.with(Cache::All, Call::Notes(reader, off, size), expect)
    }

    /// Expect `expect` from `parse_build_id()` on all three readers.
    pub fn notes_all(mut self, off: i64, size: u32, expect: Expect) -> Self {
        for r in Reader::ALL {
            self = self.notes(r, off, size, expect.clone());
        }
        self
    }

    /// Marks the file as a secretmem mapping.
    pub fn secretmem(mut self) -> Self {
        self.secretmem = true;
        self
    }

    /// The file model for a cache set-up.
    pub fn file(&self, cache: &Cache) -> FileModel {
        let mut f = FileModel::new(self.data.clone());
        f.secretmem = self.secretmem;
        match cache {
            Cache::All => f,
            Cache::FolioSize(s) => f.with_folio_size(*s),
            Cache::Only(pages) => {
                let n = f.nr_folios() as usize;
                let c = (0..n as u64)
                    .map(|k| {
                        if pages.contains(&k) {
                            Folio::Uptodate
                        } else {
                            Folio::Absent
                        }
                    })
                    .collect();
                f.with_cache(c)
            }
            Cache::NotUptodate(pages) => {
                let n = f.nr_folios() as usize;
                let c = (0..n as u64)
                    .map(|k| {
                        if pages.contains(&k) {
                            Folio::NotUptodate
                        } else {
                            Folio::Uptodate
                        }
                    })
                    .collect();
                f.with_cache(c)
            }
        }
    }
}

/// Invokes `$cb!` with the names of all corpus cases (each a function in [`cases`]),
/// so tests can generate one `#[test]` per case from this single list.
#[macro_export]
macro_rules! with_corpus_names {
    ($cb:ident) => {
        $cb! {
            elf64_valid, elf32_valid, elf64_dyn, elf32_dyn_desc1, et_rel, et_core, et_none,
            bad_magic, bad_class_0, bad_class_3, ei_data_msb_ignored, big_endian_file,
            phentsize_ignored, empty_file, file_17_bytes, header_prefix_only_40,
            no_phdrs, no_pt_note, phdrs_and_note_beyond_first_page, phdr_straddles_page,
            note_straddles_page, large_folio, header_folio_not_uptodate, secretmem_mapping,
            second_pt_note_has_id, several_notes_one_segment, name_gnv, namesz_3,
            namesz_5, wrong_type, descsz_0, descsz_20, descsz_21, descsz_16,
            skip_descsz_21_then_valid, two_build_ids_first_wins, filesz_one_short,
            filesz_zero, segment_of_exactly_16_bytes, phnum_300_note_at_256,
            phnum_300_note_at_255, phnum_pn_xnum, note_budget_id_is_256th,
            note_budget_id_is_257th, note_budget_shared_by_segments,
            note_budget_exhausted_by_segments, note_budget_hostile_segments,
            buf_note_budget_256th, buf_note_budget_257th,
            phoff_wraps, phoff_wraps_to_zero,
            phoff_negative_no_wrap, phoff_2_pow_63, phoff_beyond_eof, phoff_near_llong_max,
            phdr_table_truncated_after_note, phdr_table_truncated_before_note,
            note_read_error_swallowed, unreadable_note_only, negative_note_offset,
            note_offset_minus_5, note_offset_i64_min, note_end_above_4g_elf64,
            note_end_above_4g_elf32, filesz_over_4g, filesz_over_4g_to_16,
            huge_filesz_note_first, huge_filesz_end_is_2_pow_32, huge_filesz_after_other_note,
            namesz_align_wraps,
            namesz_no_wrap_overflows, descsz_align_wraps, align8_notes_misparsed,
            align8_notes_desc16, elf32_phoff_beyond_eof, elf32_phoff_max,
            buf_valid, buf_empty, buf_16_bytes, buf_minimal, buf_after_abi_tag,
            buf_descsz_21, buf_namesz_wrap, buf_trailing_garbage, buf_shorter_than_note,
            mem_reader_ranges,
        }
    };
}

/// The corpus cases, one function each.
pub mod cases {
    use super::*;

    const FS: Reader = Reader::File(Mode::Sleepable);
    const FN: Reader = Reader::File(Mode::Nofault);
    const MEM: Reader = Reader::Mem;

    /// 64-bit: a PT_LOAD and a PT_NOTE at 0x200 holding a 20-byte build ID.
    fn std64(notes: Vec<u8>) -> Elf {
        Elf::new64()
            .phdr(PT_LOAD, 0, 0x1000)
            .note_segment(0x200, notes)
    }

    /// 32-bit variant of [`std64`].
    fn std32(notes: Vec<u8>) -> Elf {
        Elf::new32()
            .phdr(PT_LOAD, 0, 0x1000)
            .note_segment(0x200, notes)
    }

    pub fn elf64_valid() -> Case {
        let i = id(20, 0x10);
        // Reads: 18-byte prefix, full header, phdr 0, phdr 1, note header, descriptor.
        Case::new("elf64_valid", std64(build_id_note(&i)).build())
            .sleepable_trace(
                ok(&i),
                &[
                    (0, 18),
                    (0, 64),
                    (64, 56),
                    (120, 56),
                    (0x200, 16),
                    (0x210, 20),
                ],
            )
            .nofault(ok(&i))
            .nofault_cache(Cache::Only(vec![]), err(EFAULT))
            .nofault_cache(Cache::FolioSize(65536), ok(&i))
            .buf(err(EINVAL))
            .notes_all(0x200, 36, ok(&i))
    }

    pub fn elf32_valid() -> Case {
        let i = id(20, 0x20);
        Case::new("elf32_valid", std32(build_id_note(&i)).build())
            .sleepable_trace(
                ok(&i),
                &[
                    (0, 18),
                    (0, 52),
                    (52, 32),
                    (84, 32),
                    (0x200, 16),
                    (0x210, 20),
                ],
            )
            .nofault(ok(&i))
    }

    pub fn elf64_dyn() -> Case {
        let i = id(20, 0x30);
        Case::new("elf64_dyn", std64(build_id_note(&i)).e_type(3).build()).elf(ok(&i))
    }

    pub fn elf32_dyn_desc1() -> Case {
        let i = id(1, 0x31);
        Case::new(
            "elf32_dyn_desc1",
            std32(build_id_note(&i)).e_type(3).build(),
        )
        .elf(ok(&i))
    }

    pub fn et_rel() -> Case {
        Case::new("et_rel", std64(build_id_note(&id(20, 1))).e_type(1).build())
            .sleepable_trace(err(EINVAL), &[(0, 18)])
            .nofault(err(EINVAL))
    }

    pub fn et_core() -> Case {
        Case::new(
            "et_core",
            std64(build_id_note(&id(20, 1))).e_type(4).build(),
        )
        .elf(err(EINVAL))
    }

    pub fn et_none() -> Case {
        Case::new(
            "et_none",
            std32(build_id_note(&id(20, 1))).e_type(0).build(),
        )
        .elf(err(EINVAL))
    }

    pub fn bad_magic() -> Case {
        Case::new(
            "bad_magic",
            std64(build_id_note(&id(20, 1))).ident(3, b'G').build(),
        )
        .elf(err(EINVAL))
    }

    pub fn bad_class_0() -> Case {
        Case::new(
            "bad_class_0",
            std64(build_id_note(&id(20, 1))).ident(4, 0).build(),
        )
        .sleepable_trace(err(EINVAL), &[(0, 18)])
        .nofault(err(EINVAL))
    }

    pub fn bad_class_3() -> Case {
        Case::new(
            "bad_class_3",
            std64(build_id_note(&id(20, 1))).ident(4, 3).build(),
        )
        .elf(err(EINVAL))
    }

    /// EI_DATA says big-endian, fields are little-endian: C ignores EI_DATA.
    pub fn ei_data_msb_ignored() -> Case {
        let i = id(20, 0x40);
        Case::new(
            "ei_data_msb_ignored",
            std64(build_id_note(&i)).ident(5, 2).build(),
        )
        .elf(ok(&i))
    }

    /// A genuinely big-endian header: e_type reads as 0x0200.
    pub fn big_endian_file() -> Case {
        let mut b = std64(build_id_note(&id(20, 1))).ident(5, 2).build();
        b.bytes[16] = 0;
        b.bytes[17] = 2;
        Case::new("big_endian_file", b).elf(err(EINVAL))
    }

    pub fn phentsize_ignored() -> Case {
        let i = id(20, 0x50);
        Case::new(
            "phentsize_ignored",
            std64(build_id_note(&i)).phentsize(0).build(),
        )
        .elf(ok(&i))
    }

    pub fn empty_file() -> Case {
        Case::raw("empty_file", Vec::new())
            .sleepable_trace(err(EIO), &[(0, 18)])
            .nofault(err(EFAULT))
            .buf(err(EINVAL))
    }

    /// 17 bytes: the sleepable read of 18 bytes is short; the page cache pads with
    /// zeroes, so the non-faulting mode sees a header without program headers.
    pub fn file_17_bytes() -> Case {
        Case::new(
            "file_17_bytes",
            std64(build_id_note(&id(20, 1))).len(17).build(),
        )
        .sleepable(err(EIO))
        .nofault(err(EINVAL))
    }

    /// The 18-byte prefix passes all checks, the full 64-byte header read fails.
    pub fn header_prefix_only_40() -> Case {
        Case::new(
            "header_prefix_only_40",
            std64(build_id_note(&id(20, 1))).len(40).build(),
        )
        .sleepable_trace(err(EIO), &[(0, 18), (0, 64)])
        .nofault(err(EINVAL))
    }

    pub fn no_phdrs() -> Case {
        Case::new(
            "no_phdrs",
            Elf::new64()
                .put_notes(0x100, build_id_note(&id(20, 1)))
                .build(),
        )
        .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64)])
        .nofault(err(EINVAL))
    }

    pub fn no_pt_note() -> Case {
        let e = Elf::new64()
            .phdr(PT_LOAD, 0, 0x1000)
            .phdr(PT_LOAD, 0x200, 36);
        Case::new(
            "no_pt_note",
            e.put_notes(0x200, build_id_note(&id(20, 1))).build(),
        )
        .elf(err(EINVAL))
    }

    /// Program headers in page 2, the note in page 3.
    pub fn phdrs_and_note_beyond_first_page() -> Case {
        let i = id(20, 0x60);
        let e = Elf::new64()
            .phoff(0x2000)
            .phdr(PT_LOAD, 0, 0x1000)
            .note_segment(0x3010, build_id_note(&i));
        Case::new("phdrs_and_note_beyond_first_page", e.build())
            .elf(ok(&i))
            .nofault_cache(Cache::Only(vec![0]), err(EFAULT))
            .nofault_cache(Cache::Only(vec![0, 2]), err(EINVAL))
            .nofault_cache(Cache::Only(vec![0, 2, 3]), ok(&i))
            .nofault_cache(Cache::FolioSize(16384), ok(&i))
            .nofault_cache(Cache::NotUptodate(vec![3]), err(EINVAL))
    }

    /// Program header 0 spans the page boundary; the copy needs both folios.
    pub fn phdr_straddles_page() -> Case {
        let i = id(20, 0x70);
        let e = Elf::new64()
            .phoff(4096 - 20)
            .note_segment(0x1100, build_id_note(&i));
        Case::new("phdr_straddles_page", e.build())
            .elf(ok(&i))
            .nofault_cache(Cache::Only(vec![0]), err(EFAULT))
            .nofault_cache(Cache::Only(vec![1]), err(EFAULT))
            .nofault_cache(Cache::Only(vec![0, 1]), ok(&i))
    }

    /// The note header spans the page boundary.
    pub fn note_straddles_page() -> Case {
        let i = id(20, 0x80);
        Case::new(
            "note_straddles_page",
            std64(vec![])
                .note_segment(4096 - 10, build_id_note(&i))
                .build(),
        )
        .elf(ok(&i))
        .nofault_cache(Cache::Only(vec![0]), err(EINVAL))
        .notes(FN, 4096 - 10, 36, ok(&i))
    }

    /// Everything lives in folio 0 of a 64 KiB folio, beyond the first page.
    pub fn large_folio() -> Case {
        let i = id(20, 0x90);
        let e = Elf::new64()
            .phoff(0x5000)
            .note_segment(0x9000, build_id_note(&i));
        Case::new("large_folio", e.build())
            .elf(ok(&i))
            .nofault_cache(Cache::FolioSize(65536), ok(&i))
            .nofault_cache(Cache::Only(vec![0, 5, 9]), ok(&i))
            .nofault_cache(Cache::Only(vec![0, 5]), err(EINVAL))
    }

    pub fn header_folio_not_uptodate() -> Case {
        Case::new(
            "header_folio_not_uptodate",
            std64(build_id_note(&id(20, 1))).build(),
        )
        .nofault_cache(Cache::NotUptodate(vec![0]), err(EFAULT))
    }

    pub fn secretmem_mapping() -> Case {
        Case::new(
            "secretmem_mapping",
            std64(build_id_note(&id(20, 1))).build(),
        )
        .secretmem()
        .sleepable_trace(err(EFAULT), &[])
        .nofault(err(EFAULT))
        .notes(FS, 0x200, 36, err(EFAULT))
    }

    pub fn second_pt_note_has_id() -> Case {
        let i = id(20, 0xa0);
        let e = Elf::new64()
            .phdr(PT_LOAD, 0, 0x1000)
            .note_segment(0x200, abi_tag_note())
            .note_segment(0x300, build_id_note(&i));
        Case::new("second_pt_note_has_id", e.build()).elf(ok(&i))
    }

    pub fn several_notes_one_segment() -> Case {
        let i = id(20, 0xb0);
        let mut n = abi_tag_note();
        n.extend(gnu_note(NT_GNU_PROPERTY_TYPE_0, &[1; 16]));
        n.extend(note(8, b"Android\0", 1, 4, &[1, 2, 3, 4], 4));
        n.extend(build_id_note(&i));
        Case::new("several_notes_one_segment", std64(n.clone()).build())
            .elf(ok(&i))
            .notes_all(0x200, n.len() as u32, ok(&i))
    }

    pub fn name_gnv() -> Case {
        let n = note(4, b"GNV\0", 3, 20, &id(20, 1), 4);
        Case::new("name_gnv", std64(n).build()).elf(err(EINVAL))
    }

    pub fn namesz_3() -> Case {
        let n = note(3, b"GN\0", 3, 20, &id(20, 1), 4);
        Case::new("namesz_3", std64(n).build()).elf(err(EINVAL))
    }

    pub fn namesz_5() -> Case {
        let n = note(5, b"GNU\0\0", 3, 20, &id(20, 1), 4);
        Case::new("namesz_5", std64(n).build()).elf(err(EINVAL))
    }

    pub fn wrong_type() -> Case {
        Case::new("wrong_type", std64(gnu_note(4, &id(20, 1))).build()).elf(err(EINVAL))
    }

    /// An empty build ID descriptor is skipped (followed by another note so that the
    /// segment is longer than 16 bytes and the empty one is really examined).
    pub fn descsz_0() -> Case {
        let mut n = gnu_note(3, &[]);
        n.extend(abi_tag_note());
        Case::new("descsz_0", std64(n).build())
            .sleepable_trace(
                err(EINVAL),
                &[
                    (0, 18),
                    (0, 64),
                    (64, 56),
                    (120, 56),
                    (0x200, 16),
                    (0x210, 16),
                ],
            )
            .nofault(err(EINVAL))
    }

    pub fn descsz_20() -> Case {
        let i = id(20, 0xc0);
        Case::new("descsz_20", std32(build_id_note(&i)).build()).elf(ok(&i))
    }

    pub fn descsz_21() -> Case {
        Case::new("descsz_21", std64(build_id_note(&id(21, 1))).build())
            .elf(err(EINVAL))
            .notes_all(0x200, 12 + 4 + 24, err(EINVAL))
    }

    pub fn descsz_16() -> Case {
        let i = id(16, 0xd0);
        Case::new("descsz_16", std64(build_id_note(&i)).build()).elf(ok(&i))
    }

    pub fn skip_descsz_21_then_valid() -> Case {
        let i = id(20, 0xe0);
        let mut n = build_id_note(&id(21, 2));
        n.extend(build_id_note(&i));
        Case::new("skip_descsz_21_then_valid", std64(n).build()).elf(ok(&i))
    }

    pub fn two_build_ids_first_wins() -> Case {
        let (a, b) = (id(8, 0xf0), id(20, 0x05));
        let mut n = build_id_note(&a);
        n.extend(build_id_note(&b));
        Case::new("two_build_ids_first_wins", std64(n).build()).elf(ok(&a))
    }

    /// p_filesz one byte short of the note: `new_off > note_end`.
    pub fn filesz_one_short() -> Case {
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, 35)
            .put_notes(0x100, build_id_note(&id(20, 1)));
        Case::new("filesz_one_short", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64), (64, 56), (0x100, 16)])
            .nofault(err(EINVAL))
    }

    pub fn filesz_zero() -> Case {
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, 0)
            .put_notes(0x100, build_id_note(&id(20, 1)));
        Case::new("filesz_zero", e.build()).elf(err(EINVAL))
    }

    /// A segment of exactly 16 bytes is not even read (the loop needs > 16).
    pub fn segment_of_exactly_16_bytes() -> Case {
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, 16)
            .put_notes(0x100, build_id_note(&id(20, 1)));
        Case::new("segment_of_exactly_16_bytes", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64), (64, 56)])
            .nofault(err(EINVAL))
            .notes(FS, 0x100, 17, err(EINVAL))
    }

    fn many_phdrs(note_index: usize, phnum: u16) -> Elf {
        let mut e = Elf::new64();
        for k in 0..300 {
            e = if k == note_index {
                e.phdr(PT_NOTE, 0x8000, 36)
            } else {
                e.phdr(PT_LOAD, 0, 0x1000)
            };
        }
        e.phnum(phnum)
            .put_notes(0x8000, build_id_note(&id(20, 0x33)))
    }

    /// Only the first 256 program headers are looked at.
    pub fn phnum_300_note_at_256() -> Case {
        Case::new("phnum_300_note_at_256", many_phdrs(256, 300).build()).elf(err(EINVAL))
    }

    pub fn phnum_300_note_at_255() -> Case {
        Case::new("phnum_300_note_at_255", many_phdrs(255, 300).build()).elf(ok(&id(20, 0x33)))
    }

    /// PN_XNUM (0xffff) is not special: it is clamped to 256 like any other count.
    pub fn phnum_pn_xnum() -> Case {
        Case::new("phnum_pn_xnum", many_phdrs(200, 0xffff).build()).elf(ok(&id(20, 0x33)))
    }

    /// `count` empty notes (all twelve header bytes zero: a note that only moves on), then
    /// a build ID note.
    fn empty_notes_then_id(count: usize, seed: u8) -> Vec<u8> {
        let mut n = vec![0u8; 12 * count];
        n.extend(build_id_note(&id(20, seed)));
        n
    }

    /// The 256th note header a parse reads is still looked at (MAX_NOTE_CNT).
    pub fn note_budget_id_is_256th() -> Case {
        let n = empty_notes_then_id(255, 0x41);
        let i = id(20, 0x41);
        let mut trace = vec![(0, 18), (0, 64), (64, 56), (120, 56)];
        trace.extend((0..256).map(|k| (0x200 + 12 * k, 16)));
        trace.push((0x200 + 12 * 255 + 16, 20));
        Case::new("note_budget_id_is_256th", std64(n.clone()).build())
            .sleepable_trace(ok(&i), &trace)
            .nofault(ok(&i))
            .notes_all(0x200, n.len() as u32, ok(&i))
    }

    /// The 257th is not: after 256 note headers the walk stops, without reading further.
    pub fn note_budget_id_is_257th() -> Case {
        let n = empty_notes_then_id(256, 0x42);
        let mut trace = vec![(0, 18), (0, 64), (64, 56), (120, 56)];
        trace.extend((0..256).map(|k| (0x200 + 12 * k, 16)));
        Case::new("note_budget_id_is_257th", std64(n.clone()).build())
            .sleepable_trace(err(EINVAL), &trace)
            .nofault(err(EINVAL))
            .notes_all(0x200, n.len() as u32, err(EINVAL))
    }

    /// The budget is per parse, over all PT_NOTE segments: 201 empty notes in the first
    /// segment (the walk reads 200 of their headers: the last one is too short to hold a
    /// header and a name) leave 56 for the second, whose build ID is its 56th note header.
    pub fn note_budget_shared_by_segments() -> Case {
        let (first, second) = (vec![0u8; 12 * 201], empty_notes_then_id(55, 0x43));
        let len = second.len() as u32;
        let i = id(20, 0x43);
        let e = Elf::new64()
            .note_segment(0x200, first)
            .note_segment(0x1000, second);
        Case::new("note_budget_shared_by_segments", e.build())
            .elf(ok(&i))
            .notes_all(0x1000, len, ok(&i))
    }

    /// One more empty note in the second segment and its build ID is note 257 of the parse,
    /// although a parse of that segment alone finds it.
    pub fn note_budget_exhausted_by_segments() -> Case {
        let (first, second) = (vec![0u8; 12 * 201], empty_notes_then_id(56, 0x44));
        let len = second.len() as u32;
        let e = Elf::new64()
            .note_segment(0x200, first)
            .note_segment(0x1000, second);
        Case::new("note_budget_exhausted_by_segments", e.build())
            .elf(err(EINVAL))
            .notes_all(0x1000, len, ok(&id(20, 0x44)))
    }

    /// The hostile file: 256 PT_NOTE segments, each over the same 3 MiB of zeroes (262144
    /// empty notes), then a build ID note. The parse reads the 256 program headers and 256
    /// note headers, and gives up. Unbounded, it read 262144 note headers to find the ID;
    /// without one it would read 256 times as many.
    pub fn note_budget_hostile_segments() -> Case {
        let mut e = Elf::new64();
        for _ in 0..256 {
            e = e.phdr(PT_NOTE, 0x4000, 0x30_0000 + 36);
        }
        let e = e.put_notes(0x30_4000, build_id_note(&id(20, 0x45)));
        let mut trace = vec![(0, 18), (0, 64), (64, 56)];
        trace.extend((0..256).map(|k| (0x4000 + 12 * k, 16)));
        trace.extend((1..256).map(|k| (64 + 56 * k, 56)));
        Case::new("note_budget_hostile_segments", e.build())
            .sleepable_trace(err(EINVAL), &trace)
            .nofault(err(EINVAL))
    }

    /// `build_id_parse_buf()` has the same budget: the 256th note header is looked at...
    pub fn buf_note_budget_256th() -> Case {
        let i = id(20, 0x46);
        Case::raw("buf_note_budget_256th", empty_notes_then_id(255, 0x46)).buf(ok(&i))
    }

    /// ... and the 257th is not.
    pub fn buf_note_budget_257th() -> Case {
        Case::raw("buf_note_budget_257th", empty_notes_then_id(256, 0x47)).buf(err(EINVAL))
    }

    /// e_phoff + 1 * 56 wraps past 2^64: rejected before any program header read.
    pub fn phoff_wraps() -> Case {
        Case::new(
            "phoff_wraps",
            Elf::new64().phoff(u64::MAX - 10).phnum(1).build(),
        )
        .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64)])
        .nofault(err(EINVAL))
    }

    /// phoff + 56 == 2^64 wraps to exactly 0.
    pub fn phoff_wraps_to_zero() -> Case {
        Case::new(
            "phoff_wraps_to_zero",
            Elf::new64().phoff(0u64.wrapping_sub(56)).phnum(1).build(),
        )
        .elf(err(EINVAL))
    }

    /// phoff = -57: no wrap, so the (negative) offset reaches the reader, which refuses it
    /// without reading (`-EIO`, as tmpfs would give there).
    pub fn phoff_negative_no_wrap() -> Case {
        Case::new(
            "phoff_negative_no_wrap",
            Elf::new64().phoff(0u64.wrapping_sub(57)).phnum(1).build(),
        )
        .sleepable_trace(err(EIO), &[(0, 18), (0, 64)])
        .nofault(err(EFAULT))
    }

    pub fn phoff_2_pow_63() -> Case {
        Case::new(
            "phoff_2_pow_63",
            Elf::new64().phoff(1 << 63).phnum(3).build(),
        )
        .sleepable_trace(err(EIO), &[(0, 18), (0, 64)])
        .nofault(err(EFAULT))
    }

    pub fn phoff_beyond_eof() -> Case {
        Case::new(
            "phoff_beyond_eof",
            Elf::new64().phoff(1 << 20).phnum(1).build(),
        )
        .sleepable(err(EIO))
        .nofault(err(EFAULT))
    }

    /// pos + count > LLONG_MAX: `__kernel_read()` has no `rw_verify_area()` check, and
    /// tmpfs reads nothing there.
    pub fn phoff_near_llong_max() -> Case {
        Case::new(
            "phoff_near_llong_max",
            Elf::new64().phoff(i64::MAX as u64 - 10).phnum(1).build(),
        )
        .sleepable(err(EIO))
        .nofault(err(EFAULT))
    }

    /// e_phnum says 10 but the file ends after program header 0, which has the note.
    pub fn phdr_table_truncated_after_note() -> Case {
        let i = id(20, 0x44);
        let e = Elf::new64()
            .put_notes(64, build_id_note(&i))
            .phoff(100)
            .phdr(PT_NOTE, 64, 36)
            .phnum(10);
        Case::new("phdr_table_truncated_after_note", e.len(156).build()).elf(ok(&i))
    }

    /// The note is in program header 3 but the file ends inside program header 2.
    pub fn phdr_table_truncated_before_note() -> Case {
        let e = Elf::new64()
            .put_notes(0x800, build_id_note(&id(20, 1)))
            .phdr(PT_LOAD, 0, 0)
            .phdr(PT_LOAD, 0, 0)
            .phdr(PT_LOAD, 0, 0)
            .phdr(PT_NOTE, 0x800, 36);
        Case::new(
            "phdr_table_truncated_before_note",
            e.len(64 + 2 * 56 + 30).build(),
        )
        .sleepable(err(EIO))
        .nofault(err(EINVAL))
    }

    /// A PT_NOTE beyond EOF: the read error is swallowed and the next one is used.
    pub fn note_read_error_swallowed() -> Case {
        let i = id(20, 0x55);
        let e = Elf::new64()
            .phdr(PT_NOTE, 1 << 20, 36)
            .note_segment(0x200, build_id_note(&i));
        Case::new("note_read_error_swallowed", e.build())
            .sleepable_trace(
                ok(&i),
                &[
                    (0, 18),
                    (0, 64),
                    (64, 56),
                    (1 << 20, 16),
                    (120, 56),
                    (0x200, 16),
                    (0x210, 20),
                ],
            )
            .nofault(ok(&i))
    }

    /// The only PT_NOTE is unreadable: -EINVAL, not -EIO/-EFAULT.
    pub fn unreadable_note_only() -> Case {
        let e = Elf::new64().phdr(PT_NOTE, 1 << 20, 36);
        Case::new("unreadable_note_only", e.build())
            .elf(err(EINVAL))
            .notes(FS, 1 << 20, 36, err(EIO))
            .notes(FN, 1 << 20, 36, err(EFAULT))
            .notes(MEM, 1 << 20, 36, err(ERANGE))
    }

    /// p_offset = -256 (as u64), p_filesz 512: note_end = 256 fits in u32, so the scan
    /// starts at a negative offset, which is not read; then a valid PT_NOTE follows.
    pub fn negative_note_offset() -> Case {
        let i = id(20, 0x66);
        let e = Elf::new64()
            .phdr(PT_NOTE, 0u64.wrapping_sub(256), 512)
            .note_segment(0x200, build_id_note(&i));
        Case::new("negative_note_offset", e.build())
            .sleepable_trace(
                ok(&i),
                &[
                    (0, 18),
                    (0, 64),
                    (64, 56),
                    (120, 56),
                    (0x200, 16),
                    (0x210, 20),
                ],
            )
            .nofault(ok(&i))
            .notes(FS, -256, 512, err(EIO))
            .notes(FN, -256, 512, err(EFAULT))
            .notes(MEM, -256, 512, err(ERANGE))
    }

    /// A note offset in -16..=-1: `file_off + 16` wraps, so -EOVERFLOW before any
    /// reader is involved (swallowed when it comes from a program header).
    pub fn note_offset_minus_5() -> Case {
        let e = Elf::new64().phdr(PT_NOTE, 0u64.wrapping_sub(5), 100);
        Case::new("note_offset_minus_5", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64), (64, 56)])
            .nofault(err(EINVAL))
            .notes_all(-5, 100, err(EOVERFLOW))
            .notes_all(-16, 100, err(EOVERFLOW))
            .notes(FS, -17, 100, err(EIO))
            .notes(MEM, -17, 100, err(ERANGE))
    }

    /// p_offset = 2^63 is i64::MIN: check_add_overflow() fails.
    pub fn note_offset_i64_min() -> Case {
        let e = Elf::new64().phdr(PT_NOTE, 1 << 63, 36);
        Case::new("note_offset_i64_min", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64), (64, 56)])
            .nofault(err(EINVAL))
            .notes_all(i64::MIN, 36, err(EINVAL))
            .notes_all(i64::MAX, 36, err(EINVAL))
    }

    /// note_off + note_size must fit in u32.
    pub fn note_end_above_4g_elf64() -> Case {
        let e = Elf::new64().phdr(PT_NOTE, 1 << 32, 36);
        Case::new("note_end_above_4g_elf64", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64), (64, 56)])
            .notes_all(0xffff_ffff - 35, 36, err(EINVAL))
            .notes(MEM, 0xffff_ffff - 36, 36, err(ERANGE))
    }

    pub fn note_end_above_4g_elf32() -> Case {
        let e = Elf::new32().phdr(PT_NOTE, 0xffff_ffe0, 0x40);
        Case::new("note_end_above_4g_elf32", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 52), (52, 32)])
            .nofault(err(EINVAL))
    }

    /// p_filesz = 4 GiB + 36 is truncated to 36.
    pub fn filesz_over_4g() -> Case {
        let i = id(20, 0x77);
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, (1 << 32) + 36)
            .put_notes(0x100, build_id_note(&i));
        Case::new("filesz_over_4g", e.build()).elf(ok(&i))
    }

    /// p_filesz = 4 GiB + 16 is truncated to 16, which is too small to scan.
    pub fn filesz_over_4g_to_16() -> Case {
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, (1 << 32) + 16)
            .put_notes(0x100, build_id_note(&id(20, 1)));
        Case::new("filesz_over_4g_to_16", e.build()).elf(err(EINVAL))
    }

    /// A huge segment whose first note is the build ID.
    pub fn huge_filesz_note_first() -> Case {
        let i = id(20, 0x88);
        // 0x100 + 0xfffffe00 = 0xffffff00 still fits in a u32.
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, 0xffff_fe00)
            .put_notes(0x100, build_id_note(&i));
        Case::new("huge_filesz_note_first", e.build()).elf(ok(&i))
    }

    /// 0x100 + 0xffffff00 = 2^32 exactly: check_add_overflow() into a u32 fails.
    pub fn huge_filesz_end_is_2_pow_32() -> Case {
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, 0xffff_ff00)
            .put_notes(0x100, build_id_note(&id(20, 1)));
        Case::new("huge_filesz_end_is_2_pow_32", e.build())
            .sleepable_trace(err(EINVAL), &[(0, 18), (0, 64), (64, 56)])
            .nofault(err(EINVAL))
            .notes_all(0x100, 0xffff_feff, ok(&id(20, 1)))
    }

    /// A huge segment whose scan runs off the end of the file after the first note.
    pub fn huge_filesz_after_other_note() -> Case {
        let e = Elf::new64()
            .phdr(PT_NOTE, 0x100, 0xffff_0000)
            .put_notes(0x100, abi_tag_note());
        Case::new("huge_filesz_after_other_note", e.build())
            .sleepable_trace(
                err(EINVAL),
                &[(0, 18), (0, 64), (64, 56), (0x100, 16), (0x120, 16)],
            )
            .nofault(err(EINVAL))
    }

    /// n_namesz = 0xffffffff: ALIGN() wraps to 0 and the note is stepped over as a bare
    /// 12-byte header; the build ID note right after it is found.
    pub fn namesz_align_wraps() -> Case {
        let i = id(20, 0x99);
        let mut n = note(0xffff_ffff, b"", 0, 0, &[], 4);
        n.extend(build_id_note(&i));
        Case::new("namesz_align_wraps", std64(n.clone()).build())
            .elf(ok(&i))
            .notes_all(0x200, n.len() as u32, ok(&i))
    }

    /// n_namesz = 0xfffffffc does not wrap, so new_off overflows: scan stops.
    pub fn namesz_no_wrap_overflows() -> Case {
        let mut n = note(0xffff_fffc, b"", 0, 0, &[], 4);
        n.extend(build_id_note(&id(20, 1)));
        Case::new("namesz_no_wrap_overflows", std64(n).build()).elf(err(EINVAL))
    }

    /// A build ID note with n_descsz = 0xffffffff is rejected (> 20) but its size aligns
    /// to 0, so the scan continues 16 bytes later, where another build ID note sits.
    pub fn descsz_align_wraps() -> Case {
        let i = id(20, 0xaa);
        let mut n = note(4, b"GNU\0", 3, 0xffff_ffff, &[], 4);
        n.extend(build_id_note(&i));
        Case::new("descsz_align_wraps", std64(n).build()).elf(ok(&i))
    }

    /// 8-byte aligned notes (p_align 8): a 20-byte property descriptor is padded to 24,
    /// but C steps 4-aligned and reads the next header 4 bytes early: not found.
    pub fn align8_notes_misparsed() -> Case {
        let mut n = note(4, b"GNU\0", NT_GNU_PROPERTY_TYPE_0, 20, &[7; 20], 8);
        n.extend(note(4, b"GNU\0", NT_GNU_BUILD_ID, 20, &id(20, 0xbb), 8));
        let len = n.len() as u64;
        let e = Elf::new64()
            .phdr_aligned(PT_NOTE, 0x200, len, 8)
            .put_notes(0x200, n);
        Case::new("align8_notes_misparsed", e.build()).elf(err(EINVAL))
    }

    /// With a 16-byte property descriptor, 4- and 8-byte padding agree: found.
    pub fn align8_notes_desc16() -> Case {
        let i = id(20, 0xcc);
        let mut n = note(4, b"GNU\0", NT_GNU_PROPERTY_TYPE_0, 16, &[7; 16], 8);
        n.extend(note(4, b"GNU\0", NT_GNU_BUILD_ID, 20, &i, 8));
        let len = n.len() as u64;
        let e = Elf::new64()
            .phdr_aligned(PT_NOTE, 0x200, len, 8)
            .put_notes(0x200, n);
        Case::new("align8_notes_desc16", e.build()).elf(ok(&i))
    }

    pub fn elf32_phoff_beyond_eof() -> Case {
        Case::new(
            "elf32_phoff_beyond_eof",
            Elf::new32().phoff(0x10000).phnum(2).build(),
        )
        .sleepable(err(EIO))
        .nofault(err(EFAULT))
    }

    /// For ELF32 the overflow check cannot fire (u32 + small in 64-bit arithmetic).
    pub fn elf32_phoff_max() -> Case {
        Case::new(
            "elf32_phoff_max",
            Elf::new32().phoff(0xffff_ffff).phnum(256).build(),
        )
        .sleepable_trace(err(EIO), &[(0, 18), (0, 52), (0xffff_ffff, 32)])
        .nofault(err(EFAULT))
    }

    pub fn buf_valid() -> Case {
        let i = id(20, 0xdd);
        Case::raw("buf_valid", build_id_note(&i))
            .buf(ok(&i))
            .notes(MEM, 0, 36, ok(&i))
    }

    pub fn buf_empty() -> Case {
        Case::raw("buf_empty", Vec::new()).buf(err(EINVAL))
    }

    pub fn buf_16_bytes() -> Case {
        Case::raw("buf_16_bytes", build_id_note(&id(20, 1))[..16].to_vec()).buf(err(EINVAL))
    }

    /// 20 bytes: header, name, 4-byte descriptor.
    pub fn buf_minimal() -> Case {
        let i = id(4, 0xee);
        Case::raw("buf_minimal", build_id_note(&i)).buf(ok(&i))
    }

    pub fn buf_after_abi_tag() -> Case {
        let i = id(20, 0x12);
        let mut n = abi_tag_note();
        n.extend(build_id_note(&i));
        Case::raw("buf_after_abi_tag", n).buf(ok(&i))
    }

    pub fn buf_descsz_21() -> Case {
        Case::raw("buf_descsz_21", build_id_note(&id(21, 1))).buf(err(EINVAL))
    }

    pub fn buf_namesz_wrap() -> Case {
        let i = id(20, 0x13);
        let mut n = note(0xffff_fffd, b"", 0, 0xffff_ffff, &[], 4);
        n.extend(build_id_note(&i));
        Case::raw("buf_namesz_wrap", n).buf(ok(&i))
    }

    pub fn buf_trailing_garbage() -> Case {
        let i = id(20, 0x14);
        let mut n = build_id_note(&i);
        n.extend([0xff; 13]);
        Case::raw("buf_trailing_garbage", n).buf(ok(&i))
    }

    pub fn buf_shorter_than_note() -> Case {
        Case::raw(
            "buf_shorter_than_note",
            build_id_note(&id(20, 1))[..35].to_vec(),
        )
        .buf(err(EINVAL))
    }

    /// The memory reader's -ERANGE boundaries.
    pub fn mem_reader_ranges() -> Case {
        let i = id(20, 0x15);
        let mut d = vec![0u8; 64];
        d.extend(build_id_note(&i));
        let fields = note_fields(&d[64..], 64);
        // The descriptor ends exactly at data_sz: fine.
        let mut case = Case::raw("mem_reader_ranges", d);
        case.fields = fields;
        case.notes(MEM, 64, 36, ok(&i))
            .notes(MEM, 64, 100, ok(&i))
            .notes(MEM, 90, 100, err(ERANGE))
            .notes(MEM, 100, 17, err(ERANGE))
            .notes(MEM, 84, 17, err(EINVAL))
    }
}

macro_rules! make_all {
    ($($name:ident),* $(,)?) => {
        /// All corpus cases.
        pub fn all() -> Vec<Case> {
            vec![$(cases::$name()),*]
        }
    };
}
with_corpus_names!(make_all);
