// SPDX-License-Identifier: GPL-2.0

//! Runs one call through both implementations and compares them.

use crate::cref::{self, Entry, Mode, Outcome, SENTINEL_SIZE};
use crate::elf::{self, ByteOrder, Fetched, MemReader, NativeEndian, ReadAt};
use crate::freader::{NofaultReader, SleepableReader};
use crate::model::{FileModel, OpenFile};
use kernel::error::Result;

/// `(offset, length)` of each read issued to a sleepable reader, in order.
pub type Trace = Vec<(i64, u64)>;

/// Which reader `parse_build_id()` / `parse_notes()` runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// File-backed freader in the given mode.
    File(Mode),
    /// Memory freader over the file's bytes (`data_sz` = file size).
    Mem,
}

impl Reader {
    /// All three readers.
    pub const ALL: [Reader; 3] = [
        Reader::File(Mode::Sleepable),
        Reader::File(Mode::Nofault),
        Reader::Mem,
    ];
}

/// A call of the C API and its Rust counterpart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `__build_id_parse()` / [`elf::parse_elf`].
    ParseElf(Mode),
    /// An exported C entry point / [`elf::parse_elf`] with the matching reader.
    Entry(Entry),
    /// `build_id_parse_buf()` on the file bytes / [`elf::parse_buf`]; `size` is not
    /// reported by C and is compared as [`SENTINEL_SIZE`].
    Buf,
    /// `parse_build_id(r, note_off, note_size)` / [`elf::parse_notes`].
    Notes(Reader, i64, u32),
}

/// What both implementations did.
#[derive(Clone, Debug)]
pub struct Observed {
    /// Rust result in C terms.
    pub rust: Outcome,
    /// C result.
    pub c: Outcome,
    /// Reads issued by Rust to a sleepable reader.
    pub rust_trace: Option<Trace>,
    /// `__kernel_read()` calls made by C.
    pub c_trace: Option<Trace>,
    /// Description of any resource imbalance or `WARN_ON()` on either side, or of
    /// different page cache lookups.
    pub problem: Option<String>,
}

impl Observed {
    /// `Ok(outcome)` if both agree on everything, else a description.
    pub fn agreed(&self) -> Result<Outcome, String> {
        if let Some(p) = &self.problem {
            return Err(p.clone());
        }
        if self.rust != self.c {
            return Err(format!(
                "outcome differs:\n  rust {:?}\n  c    {:?}",
                self.rust, self.c
            ));
        }
        if self.rust_trace != self.c_trace {
            return Err(format!(
                "read sequence differs:\n  rust {:?}\n  c    {:?}",
                self.rust_trace, self.c_trace
            ));
        }
        Ok(self.rust)
    }
}

/// Records the fetches the parser hands to a reader: with a sleepable reader, C calls
/// `__kernel_read()` once for each of them, unless the file is a `memfd_secret()` one or
/// the position is negative (refused before reading).
struct Traced<R> {
    reader: R,
    secretmem: bool,
    trace: Trace,
}

impl<R> Traced<R> {
    /// Traces a fetch as the `__kernel_read()` C would issue for it, if any.
    fn record(&mut self, offset: i64, len: usize) {
        if !self.secretmem && offset >= 0 {
            self.trace.push((offset, len as u64));
        }
    }
}

impl<R: ReadAt> ReadAt for Traced<R> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<()> {
        self.record(offset, buf.len());
        self.reader.read_at(offset, buf)
    }

    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched> {
        self.record(offset, buf.len());
        self.reader.fetch_at(offset, buf)
    }

    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        self.reader.read_fetched(at, dst)
    }
}

/// What the kernel's reader did on a file of the model.
struct RustFileCall {
    outcome: Outcome,
    /// The fetches of a sleepable parse.
    trace: Option<Trace>,
    lookups: u64,
    /// Folio references still held after the reader was dropped.
    leaked: i64,
    /// Reads at a negative position, which a block file system never finishes.
    negative_reads: u64,
}

fn rust_file(
    file: &FileModel,
    mode: Mode,
    f: impl Fn(&mut dyn ReadAt) -> Result<elf::BuildId>,
) -> RustFileCall {
    let open = OpenFile::new(file);
    let cache = &open;
    let (result, trace) = match mode {
        Mode::Sleepable => {
            let mut traced = Traced {
                reader: SleepableReader::new(&cache),
                secretmem: file.secretmem,
                trace: Vec::new(),
            };
            (f(&mut traced), traced.trace)
        }
        Mode::Nofault => (f(&mut NofaultReader::new(&cache)), Vec::new()),
    };
    RustFileCall {
        outcome: Outcome::from_rust(&result),
        trace: (mode == Mode::Sleepable).then_some(trace),
        lookups: open.lookups(),
        leaked: open.references(),
        negative_reads: open.negative_reads(),
    }
}

/// What the C side did, and what went wrong on it or between the two sides.
fn compare_file(rust: RustFileCall, c: cref::FileCall, mode: Mode) -> Observed {
    let mut problems = Vec::new();
    if !c.balanced() {
        problems.push(format!(
            "C side: folio gets {} puts {}, kmaps {} kunmaps {}, warns {}",
            c.folio_gets, c.folio_puts, c.kmaps, c.kunmaps, c.warns
        ));
    }
    if rust.negative_reads != 0 {
        problems.push(format!(
            "Rust side: {} reads at a negative position",
            rust.negative_reads
        ));
    }
    if rust.leaked != 0 {
        problems.push(format!(
            "Rust side: {} folio references leaked",
            rust.leaked
        ));
    }
    // C's sleepable reader does not look at the page cache; Rust's nofault reader must look it
    // up exactly like C's, or their results under the eviction schedule would differ.
    if mode == Mode::Nofault && rust.lookups != c.lookups {
        problems.push(format!(
            "page cache lookups differ: rust {} c {}",
            rust.lookups, c.lookups
        ));
    }
    Observed {
        rust: rust.outcome,
        c: c.outcome,
        rust_trace: rust.trace,
        c_trace: (mode == Mode::Sleepable).then_some(c.trace),
        problem: (!problems.is_empty()).then(|| problems.join("; ")),
    }
}

fn warn_problem(warns: u64) -> Option<String> {
    (warns != 0).then(|| format!("C side: {warns} WARN_ON() hits"))
}

/// The reader mode of a file-backed call.
fn file_mode(call: Call) -> Option<Mode> {
    match call {
        Call::ParseElf(mode) | Call::Notes(Reader::File(mode), _, _) => Some(mode),
        Call::Entry(Entry::Parse | Entry::ParseFile) => Some(Mode::Sleepable),
        Call::Entry(Entry::ParseNofault) => Some(Mode::Nofault),
        Call::Buf | Call::Notes(Reader::Mem, _, _) => None,
    }
}

/// Runs the Rust half of `call` on `file`, reading fields in byte order `O`.
fn rust_call<O: ByteOrder>(file: &FileModel, call: Call) -> RustFileCall {
    let in_memory = |result: &Result<elf::BuildId>| RustFileCall {
        outcome: Outcome::from_rust(result),
        trace: None,
        lookups: 0,
        leaked: 0,
        negative_reads: 0,
    };
    match call {
        Call::ParseElf(_) | Call::Entry(_) => {
            rust_file(file, file_mode(call).unwrap_or(Mode::Sleepable), |r| {
                elf::parse_elf_as::<O, _>(r)
            })
        }
        Call::Notes(Reader::File(mode), off, size) => {
            rust_file(file, mode, |r| elf::parse_notes_as::<O, _>(r, off, size))
        }
        Call::Buf => {
            let mut call = in_memory(&elf::parse_buf_as::<O>(&file.data));
            // C does not report the size.
            call.outcome.size = SENTINEL_SIZE;
            call
        }
        Call::Notes(Reader::Mem, off, size) => in_memory(&elf::parse_notes_as::<O, _>(
            &mut MemReader::new(&file.data),
            off,
            size,
        )),
    }
}

/// Runs `call` on `file` in Rust only, as a CPU of byte order `O` would: the outcome, and
/// for a sleepable reader the fetches.
pub fn run_rust_as<O: ByteOrder>(file: &FileModel, call: Call) -> (Outcome, Option<Trace>) {
    let rust = rust_call::<O>(file, call);
    (rust.outcome, rust.trace)
}

/// Runs `call` on `file` through C and Rust.
pub fn run(file: &FileModel, call: Call) -> Observed {
    let rust = rust_call::<NativeEndian>(file, call);
    let (c, warns) = match call {
        Call::ParseElf(mode) => {
            return compare_file(rust, cref::build_id_parse(file, mode), mode);
        }
        Call::Entry(entry) => {
            let mode = file_mode(call).unwrap_or(Mode::Sleepable);
            return compare_file(rust, cref::build_id_parse_entry(file, entry), mode);
        }
        Call::Notes(Reader::File(mode), off, size) => {
            return compare_file(rust, cref::parse_notes_file(file, mode, off, size), mode);
        }
        Call::Buf => cref::build_id_parse_buf(&file.data),
        Call::Notes(Reader::Mem, off, size) => cref::parse_notes_mem(&file.data, off, size),
    };
    Observed {
        rust: rust.outcome,
        c,
        rust_trace: None,
        c_trace: None,
        problem: warn_problem(warns),
    }
}
