// SPDX-License-Identifier: GPL-2.0

//! Deterministic, structure-aware differential fuzzing of C vs. Rust.
//!
//! Case `n` of a run with seed `s` depends only on `(s, n)`, so any failure can be
//! replayed alone (`buildid-elf-fuzz --seed s --case n`). Inputs are corpus images or
//! freshly generated ELF files, mutated field by field (sizes and offsets set to
//! boundary values), byte by byte and by truncation/extension, combined with a
//! random page cache state. Every input is run through all C/Rust pairs:
//! `__build_id_parse()` in both modes (directly and through a random exported entry
//! point), `build_id_parse_buf()` on a note buffer, and `parse_build_id()` with
//! chosen offsets on all three readers.

use crate::check::{self, Call, Reader};
use crate::corpus::{self, Built, Elf, Field, FieldKind, PT_LOAD, PT_NOTE};
use crate::cref::{Entry, Mode};
use crate::model::{FileModel, Folio};
use std::time::{Duration, Instant};

/// SplitMix64: small, fast and good enough for input generation.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for case `case` of run `seed`.
    pub fn for_case(seed: u64, case: u64) -> Self {
        let mut r = Rng(seed ^ 0x6a09_e667_f3bc_c909);
        let s = r.next_u64() ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Rng(s)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform index into a slice of length `n` (`n > 0`).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// A random element.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())]
    }
}

/// Values that sit on the limits the C code (and the port) cares about.
const BOUNDARY: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    8,
    11,
    12,
    15,
    16,
    17,
    19,
    20,
    21,
    24,
    32,
    36,
    52,
    56,
    64,
    255,
    256,
    257,
    0xfff,
    0x1000,
    0x1001,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffb,
    0xffff_fffc,
    0xffff_fffd,
    0xffff_ffff,
    0x1_0000_0000,
    0x1_0000_0010,
    0x1_0000_0024,
    0x7fff_ffff_ffff_ffff,
    0x7fff_ffff_ffff_ffc0,
    0x8000_0000_0000_0000,
    0xffff_ffff_ffff_ffc7, // -57
    0xffff_ffff_ffff_ffc8, // -56
    0xffff_ffff_ffff_ffef, // -17
    0xffff_ffff_ffff_fff0, // -16
    0xffff_ffff_ffff_ff00, // -256
    u64::MAX,
];

/// One generated input.
#[derive(Clone, Debug)]
pub struct Input {
    /// The file, with its page cache state.
    pub file: FileModel,
    /// Buffer for `build_id_parse_buf()`.
    pub buf: Vec<u8>,
    /// Offsets for direct `parse_build_id()` calls.
    pub notes: Vec<(i64, u32)>,
    /// Exported entry points to use for the file (one sleepable, one non-faulting).
    pub entries: [Entry; 2],
}

fn random_note(rng: &mut Rng) -> Vec<u8> {
    let align = if rng.chance(1, 5) { 8 } else { 4 };
    match rng.below(8) {
        0..=2 => {
            let n = rng.pick(&[20, 20, 20, 16, 8, 1, 0, 21, 4]);
            corpus::note(
                4,
                b"GNU\0",
                3,
                n as u32,
                &corpus::id(n, rng.next_u64() as u8),
                align,
            )
        }
        3 => corpus::abi_tag_note(),
        4 => corpus::note(
            4,
            b"GNU\0",
            5,
            16,
            &[0xc0, 0, 0, 0xc0, 4, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0],
            8,
        ),
        5 => corpus::note(4, b"Go\0\0", 4, 20, &corpus::id(20, 3), 4),
        6 => corpus::note(0, b"", rng.below(5) as u32, 4, &[1, 2, 3, 4], 4),
        _ => {
            let namesz = rng.below(10) as u32;
            let name: Vec<u8> = (0..namesz).map(|_| rng.next_u64() as u8).collect();
            let desc: Vec<u8> = (0..rng.below(30)).map(|_| rng.next_u64() as u8).collect();
            corpus::note(
                namesz,
                &name,
                rng.below(6) as u32,
                desc.len() as u32,
                &desc,
                align,
            )
        }
    }
}

fn random_notes(rng: &mut Rng) -> Vec<u8> {
    let mut v = Vec::new();
    for _ in 0..1 + rng.below(4) {
        v.extend(random_note(rng));
    }
    v
}

/// A random, mostly well-formed ELF image.
fn random_elf(rng: &mut Rng) -> Built {
    let mut e = if rng.chance(1, 2) {
        Elf::new64()
    } else {
        Elf::new32()
    };
    if rng.chance(1, 8) {
        e = e.e_type(rng.below(6) as u16);
    } else if rng.chance(1, 2) {
        e = e.e_type(3);
    }
    let nphdr = if rng.chance(1, 20) {
        250 + rng.below(20)
    } else {
        rng.below(6)
    };
    let ehsz = e.ehdr_size() as u64;
    let phoff = match rng.below(6) {
        0 => 4096 - rng.below(60),
        1 => 0x2000 + rng.below(0x100),
        2 => ehsz + rng.below(64),
        _ => ehsz,
    };
    e = e.phoff(phoff);
    let table_end = phoff + nphdr * e.phdr_size() as u64;
    let mut free = table_end.next_multiple_of(4);
    for _ in 0..nphdr {
        if rng.chance(1, 3) || nphdr > 10 && rng.chance(9, 10) {
            e = e.phdr(PT_LOAD, 0, 0x1000);
            continue;
        }
        let notes = random_notes(rng);
        let off = match rng.below(6) {
            0 => 4096 - rng.below(40),
            1 => (free + 0x1000).next_multiple_of(4),
            _ => free,
        } as usize;
        free = free
            .max(off as u64 + notes.len() as u64)
            .next_multiple_of(4)
            + rng.below(3) * 4;
        let len = notes.len() as u64;
        let align = if rng.chance(1, 4) { 8 } else { 4 };
        e = e
            .put_notes(off, notes)
            .phdr_aligned(PT_NOTE, off as u64, len, align);
    }
    e.build()
}

fn boundary_or_near(rng: &mut Rng, f: &Field, img: &[u8]) -> u64 {
    match rng.below(10) {
        0..=5 => rng.pick(BOUNDARY),
        6 => (img.len() as u64)
            .wrapping_add(rng.below(40))
            .wrapping_sub(20),
        7 => {
            let cur = read_field(img, f);
            cur.wrapping_add(rng.below(9)).wrapping_sub(4)
        }
        8 => rng.next_u64(),
        _ => rng.below(0x10000),
    }
}

fn read_field(img: &[u8], f: &Field) -> u64 {
    let mut b = [0u8; 8];
    b[..f.width].copy_from_slice(&img[f.off..f.off + f.width]);
    u64::from_le_bytes(b)
}

fn write_field(img: &mut [u8], f: &Field, v: u64) {
    img[f.off..f.off + f.width].copy_from_slice(&v.to_le_bytes()[..f.width]);
}

/// Applies 1..=4 structure-aware or byte-level mutations.
fn mutate(rng: &mut Rng, b: &mut Built) {
    for _ in 0..1 + rng.below(4) {
        let img = &mut b.bytes;
        match rng.below(12) {
            0..=5 if !b.fields.is_empty() => {
                let f = b.fields[rng.index(b.fields.len())];
                if f.off + f.width > img.len() {
                    continue;
                }
                let v = match f.kind {
                    FieldKind::Magic => {
                        let mut m = u32::from_le_bytes(*b"\x7fELF") as u64;
                        m ^= 1 << rng.below(32);
                        m
                    }
                    FieldKind::Class | FieldKind::Data => rng.pick(&[0, 1, 2, 3, 0xff]),
                    FieldKind::EType => rng.pick(&[0, 1, 2, 3, 4, 0x200, 0x300, 0xfe00, 0xffff]),
                    FieldKind::PType => rng.pick(&[0, 1, 4, 4, 6, 0x6474_e553, 0x1_0000_0004]),
                    FieldKind::NType => rng.pick(&[0, 1, 3, 3, 4, 5, 0x103]),
                    FieldKind::NoteName => u32::from_le_bytes(
                        rng.pick(&[*b"GNU\0", *b"GNV\0", *b"GNU!", *b"gnu\0", *b"\0NU\0"]),
                    ) as u64,
                    _ => boundary_or_near(rng, &f, img),
                };
                write_field(img, &f, v);
            }
            6 if !img.is_empty() => {
                let i = rng.index(img.len());
                img[i] ^= 1 << rng.below(8);
            }
            7 if !img.is_empty() => {
                let i = rng.index(img.len());
                img[i] = rng.next_u64() as u8;
            }
            8 if !img.is_empty() => {
                // Truncate, preferably right at or next to a field boundary.
                let at = if rng.chance(1, 2) && !b.fields.is_empty() {
                    let f = b.fields[rng.index(b.fields.len())];
                    (f.off + rng.index(f.width + 1)).min(img.len())
                } else {
                    rng.index(img.len() + 1)
                };
                img.truncate(at);
                b.fields.retain(|f| f.off + f.width <= at);
            }
            9 => {
                let extra = rng.index(64);
                let fill = if rng.chance(1, 2) {
                    0
                } else {
                    rng.next_u64() as u8
                };
                img.extend(std::iter::repeat_n(fill, extra));
            }
            10 if img.len() >= 16 => {
                // Copy a chunk elsewhere (duplicates notes and headers).
                let len = 4 + rng.index(40.min(img.len() - 4));
                let from = rng.index(img.len() - len + 1);
                let to = rng.index(img.len() - len + 1);
                let chunk = img[from..from + len].to_vec();
                img[to..to + len].copy_from_slice(&chunk);
            }
            _ => {
                // Append a note somewhere near the end.
                let n = random_note(rng);
                let base = img.len();
                b.fields.extend(corpus::note_fields(&n, base));
                img.extend(n);
            }
        }
    }
}

fn random_cache(rng: &mut Rng, file: &mut FileModel) {
    file.folio_size = rng.pick(&[4096, 4096, 4096, 8192, 16384, 65536]);
    let n = file.nr_folios() as usize;
    file.cache = match rng.below(10) {
        0..=5 => vec![Folio::Uptodate; n],
        6 => Vec::new(),
        _ => (0..n + rng.index(2))
            .map(|_| match rng.below(8) {
                0 => Folio::Absent,
                1 => Folio::NotUptodate,
                _ => Folio::Uptodate,
            })
            .collect(),
    };
    file.secretmem = rng.chance(1, 50);
    // Evict at random during the parse too: the same lookups of C and Rust then fail.
    file.evict_mask = if rng.chance(1, 3) {
        rng.next_u64() & rng.next_u64()
    } else {
        0
    };
}

/// `(p_offset, p_filesz)` of the program headers still present in the image (for
/// realistic note offsets).
fn note_regions(b: &Built) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut off = None;
    for f in b.fields.iter().filter(|f| f.off + f.width <= b.bytes.len()) {
        match f.kind {
            FieldKind::POffset => off = Some(read_field(&b.bytes, f)),
            FieldKind::PFilesz => {
                if let Some(o) = off.take() {
                    out.push((o, read_field(&b.bytes, f)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Generates case `case` of run `seed`.
pub fn generate(seed: u64, case: u64, corpus: &[corpus::Case]) -> Input {
    let mut rng = Rng::for_case(seed, case);
    let mut built = if rng.chance(1, 2) && !corpus.is_empty() {
        let c = &corpus[rng.index(corpus.len())];
        Built {
            bytes: c.data.clone(),
            fields: c.fields.clone(),
        }
    } else {
        random_elf(&mut rng)
    };
    if !rng.chance(1, 10) {
        mutate(&mut rng, &mut built);
    }
    let regions = note_regions(&built);

    let buf = match rng.below(4) {
        0 => built.bytes.clone(),
        1 if !regions.is_empty() => {
            let (off, size) = regions[rng.index(regions.len())];
            let start = (off as usize).min(built.bytes.len());
            let end = start.saturating_add(size as usize).min(built.bytes.len());
            built.bytes[start..end].to_vec()
        }
        _ => {
            let mut nb = Built {
                bytes: random_notes(&mut rng),
                fields: Vec::new(),
            };
            nb.fields = corpus::note_fields(&nb.bytes, 0);
            if rng.chance(2, 3) {
                mutate(&mut rng, &mut nb);
            }
            nb.bytes
        }
    };

    let mut notes = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let (off, size) = if !regions.is_empty() && rng.chance(1, 2) {
            regions[rng.index(regions.len())]
        } else {
            (rng.pick(BOUNDARY), rng.pick(BOUNDARY))
        };
        let off = match rng.below(4) {
            0 => rng.pick(BOUNDARY),
            1 => off.wrapping_add(rng.below(33)).wrapping_sub(16),
            _ => off,
        };
        let size = if rng.chance(1, 4) {
            rng.pick(BOUNDARY)
        } else {
            size
        };
        notes.push((off as i64, size as u32));
    }

    let mut file = FileModel::new(built.bytes);
    random_cache(&mut rng, &mut file);
    let entries = [
        rng.pick(&[Entry::Parse, Entry::ParseFile]),
        Entry::ParseNofault,
    ];
    Input {
        file,
        buf,
        notes,
        entries,
    }
}

/// The calls made for an input, with the file each runs on.
pub fn calls(input: &Input) -> Vec<Call> {
    let mut v = vec![
        Call::ParseElf(Mode::Sleepable),
        Call::ParseElf(Mode::Nofault),
        Call::Entry(input.entries[0]),
        Call::Entry(input.entries[1]),
    ];
    for &(off, size) in &input.notes {
        for r in Reader::ALL {
            v.push(Call::Notes(r, off, size));
        }
    }
    v
}

/// Runs all calls for `input`; returns the sleepable `__build_id_parse()` result,
/// or a description of the first disagreement.
pub fn check_input(input: &Input) -> Result<i32, String> {
    let mut sleepable_ret = 0;
    for call in calls(input) {
        let outcome = check::run(&input.file, call)
            .agreed()
            .map_err(|e| format!("{call:?}: {e}"))?;
        if call == Call::ParseElf(Mode::Sleepable) {
            sleepable_ret = outcome.ret;
        }
    }
    // build_id_parse_buf() and parse_build_id(mem, 0, len) on the separate buffer.
    let buf_file = FileModel::new(input.buf.clone());
    for call in [
        Call::Buf,
        Call::Notes(Reader::Mem, 0, input.buf.len() as u32),
    ] {
        check::run(&buf_file, call)
            .agreed()
            .map_err(|e| format!("{call:?} on buffer {:02x?}: {e}", input.buf))?;
    }
    Ok(sleepable_ret)
}

/// Statistics of a run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Inputs checked.
    pub cases: u64,
    /// Inputs on which sleepable `__build_id_parse()` found a build ID.
    pub found: u64,
    /// Distinct sleepable return codes seen, with counts.
    pub rets: std::collections::BTreeMap<i32, u64>,
}

/// A disagreement, with what is needed to replay it.
#[derive(Clone, Debug)]
pub struct Failure {
    /// Seed of the run.
    pub seed: u64,
    /// Case number.
    pub case: u64,
    /// What differed.
    pub message: String,
    /// The input.
    pub input: Input,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "C and Rust disagree on seed {} case {}:",
            self.seed, self.case
        )?;
        writeln!(f, "{}", self.message)?;
        writeln!(
            f,
            "file ({} bytes, folio size {}, cache {:?}, evict {:#x}, secretmem {}): {:02x?}",
            self.input.file.data.len(),
            self.input.file.folio_size,
            self.input.file.cache,
            self.input.file.evict_mask,
            self.input.file.secretmem,
            self.input.file.data
        )?;
        write!(
            f,
            "replay: cargo run -p buildid-elf --bin buildid-elf-fuzz -- --seed {} --case {}",
            self.seed, self.case
        )
    }
}

/// Checks case numbers `first..` until `max_cases` were checked or `deadline` passed.
pub fn run(
    seed: u64,
    first: u64,
    max_cases: Option<u64>,
    time: Option<Duration>,
) -> Result<Stats, Box<Failure>> {
    let corpus = corpus::all();
    let start = Instant::now();
    let mut stats = Stats::default();
    let mut case = first;
    loop {
        if max_cases.is_some_and(|m| stats.cases >= m) || time.is_some_and(|t| start.elapsed() >= t)
        {
            return Ok(stats);
        }
        let input = generate(seed, case, &corpus);
        let r = match check_input(&input) {
            Ok(r) => r,
            Err(message) => {
                return Err(Box::new(Failure {
                    seed,
                    case,
                    message,
                    input,
                }))
            }
        };
        *stats.rets.entry(r).or_default() += 1;
        stats.found += u64::from(r == 0);
        stats.cases += 1;
        case += 1;
    }
}
