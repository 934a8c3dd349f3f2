// SPDX-License-Identifier: GPL-2.0

//! A valid file (and a valid note buffer) truncated at every byte offset: one check
//! per offset and mode, with the expected result derived from the read sequence
//! `[0,18) [0,ehdr) [phdr) [note hdr) [desc)`.

use buildid_elf::check::{self, Call};
use buildid_elf::corpus::{abi_tag_note, build_id_note, id, Elf, Expect};
use buildid_elf::cref::Mode;
use buildid_elf::model::FileModel;
use kernel::error::code::*;

/// Checks one truncated input against `expect` in C and Rust.
fn check(file: &FileModel, call: Call, expect: &Expect, what: &str) {
    let want = expect.outcome(call);
    let obs = check::run(file, call);
    assert_eq!(obs.c, want, "{what}: C original");
    assert_eq!(obs.rust, want, "{what}: Rust port");
    if let Err(e) = obs.agreed() {
        panic!("{what}: {e}");
    }
}

/// ELF header, one PT_NOTE program header right after it, the build ID note right
/// after that. Returns the checks performed.
fn truncate_elf(wide: bool) -> usize {
    let i = id(20, 0x5a);
    let e = if wide { Elf::new64() } else { Elf::new32() };
    let note_off = e.ehdr_size() + e.phdr_size();
    let full = e.note_segment(note_off, build_id_note(&i)).bytes();
    assert_eq!(full.len(), note_off + 36);
    let mut checks = 0;
    for t in 0..=full.len() {
        let file = FileModel::new(full[..t].to_vec());
        // Sleepable: the first read that does not fit fails with -EIO; reads of the
        // note are swallowed (-EINVAL).
        // (ehdr prefix, full ehdr and the phdr all end by `note_off`)
        let sleepable = if t < note_off {
            Expect::Err(EIO)
        } else if t < full.len() {
            Expect::Err(EINVAL)
        } else {
            Expect::Id(i.clone())
        };
        // Non-faulting: the page cache zero-fills the rest of the page, so every field
        // cut off reads as 0. Everything up to the note name's last byte (which is 0
        // anyway) is needed; descriptor bytes past the end read as 0.
        let nofault = if t == 0 {
            Expect::Err(EFAULT)
        } else if t < note_off + 15 {
            Expect::Err(EINVAL)
        } else {
            let mut got = i.clone();
            for (j, b) in got.iter_mut().enumerate() {
                if note_off + 16 + j >= t {
                    *b = 0;
                }
            }
            Expect::Id(got)
        };
        let what = |m: &str| {
            format!(
                "ELF{} truncated to {t} bytes, {m}",
                if wide { 64 } else { 32 }
            )
        };
        check(
            &file,
            Call::ParseElf(Mode::Sleepable),
            &sleepable,
            &what("sleepable"),
        );
        check(
            &file,
            Call::ParseElf(Mode::Nofault),
            &nofault,
            &what("nofault"),
        );
        checks += 2;
    }
    checks
}

#[test]
fn elf64_truncated_at_every_offset() {
    let n = truncate_elf(true);
    println!("{n} truncation checks");
    assert_eq!(n, 2 * (64 + 56 + 36 + 1));
}

#[test]
fn elf32_truncated_at_every_offset() {
    let n = truncate_elf(false);
    assert_eq!(n, 2 * (52 + 32 + 36 + 1));
}

/// build_id_parse_buf() on an ABI tag note (32 bytes) + build ID note (36 bytes),
/// truncated at every length.
#[test]
fn note_buffer_truncated_at_every_offset() {
    let i = id(20, 0x6b);
    let mut full = abi_tag_note();
    full.extend(build_id_note(&i));
    assert_eq!(full.len(), 68);
    for t in 0..=full.len() {
        // Only the complete buffer has the build ID: the first header needs > 16
        // bytes, the first note is complete at 32, the second needs all 68.
        let expect = if t == full.len() {
            Expect::Id(i.clone())
        } else {
            Expect::Err(EINVAL)
        };
        let file = FileModel::new(full[..t].to_vec());
        check(
            &file,
            Call::Buf,
            &expect,
            &format!("note buffer truncated to {t} bytes"),
        );
    }
}
