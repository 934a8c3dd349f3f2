// SPDX-License-Identifier: GPL-2.0

//! Runs one call through both implementations and compares them.

use crate::cref::{self, Entry, Mode, Outcome, SENTINEL_SIZE};
use crate::elf::{self, MemReader};
use crate::model::{FileModel, NofaultReader, SleepableReader};

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
    /// Description of any C resource imbalance or `WARN_ON()`.
    pub c_problem: Option<String>,
}

impl Observed {
    /// `Ok(outcome)` if both agree on everything, else a description.
    pub fn agreed(&self) -> Result<Outcome, String> {
        if let Some(p) = &self.c_problem {
            return Err(format!("C side: {p}"));
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

fn rust_file(
    file: &FileModel,
    mode: Mode,
    f: impl Fn(&mut dyn elf::ReadAt) -> Result<elf::BuildId, i32>,
) -> (Outcome, Option<Trace>) {
    match mode {
        Mode::Sleepable => {
            let mut r = SleepableReader::new(file);
            let res = f(&mut r);
            (Outcome::from_rust(&res), Some(r.trace))
        }
        Mode::Nofault => {
            let mut r = NofaultReader::new(file);
            (Outcome::from_rust(&f(&mut r)), None)
        }
    }
}

fn c_file(call: cref::FileCall, mode: Mode) -> (Outcome, Option<Trace>, Option<String>) {
    let problem = (!call.balanced()).then(|| {
        format!(
            "folio gets {} puts {}, kmaps {} kunmaps {}, warns {}",
            call.folio_gets, call.folio_puts, call.kmaps, call.kunmaps, call.warns
        )
    });
    let trace = (mode == Mode::Sleepable).then_some(call.trace);
    (call.outcome, trace, problem)
}

fn warn_problem(warns: u64) -> Option<String> {
    (warns != 0).then(|| format!("{warns} WARN_ON() hits"))
}

/// Runs `call` on `file` through C and Rust.
pub fn run(file: &FileModel, call: Call) -> Observed {
    match call {
        Call::ParseElf(mode) => {
            let (rust, rust_trace) = rust_file(file, mode, |r| elf::parse_elf(r));
            let (c, c_trace, c_problem) = c_file(cref::build_id_parse(file, mode), mode);
            Observed {
                rust,
                c,
                rust_trace,
                c_trace,
                c_problem,
            }
        }
        Call::Entry(entry) => {
            let mode = match entry {
                Entry::Parse | Entry::ParseFile => Mode::Sleepable,
                Entry::ParseNofault => Mode::Nofault,
            };
            let (rust, rust_trace) = rust_file(file, mode, |r| elf::parse_elf(r));
            let (c, c_trace, c_problem) = c_file(cref::build_id_parse_entry(file, entry), mode);
            Observed {
                rust,
                c,
                rust_trace,
                c_trace,
                c_problem,
            }
        }
        Call::Buf => {
            let mut rust = Outcome::from_rust(&elf::parse_buf(&file.data));
            rust.size = SENTINEL_SIZE;
            let (c, warns) = cref::build_id_parse_buf(&file.data);
            Observed {
                rust,
                c,
                rust_trace: None,
                c_trace: None,
                c_problem: warn_problem(warns),
            }
        }
        Call::Notes(Reader::File(mode), off, size) => {
            let (rust, rust_trace) = rust_file(file, mode, |r| elf::parse_notes(r, off, size));
            let (c, c_trace, c_problem) =
                c_file(cref::parse_notes_file(file, mode, off, size), mode);
            Observed {
                rust,
                c,
                rust_trace,
                c_trace,
                c_problem,
            }
        }
        Call::Notes(Reader::Mem, off, size) => {
            let rust = Outcome::from_rust(&elf::parse_notes(
                &mut MemReader::new(&file.data),
                off,
                size,
            ));
            let (c, warns) = cref::parse_notes_mem(&file.data, off, size);
            Observed {
                rust,
                c,
                rust_trace: None,
                c_trace: None,
                c_problem: warn_problem(warns),
            }
        }
    }
}
