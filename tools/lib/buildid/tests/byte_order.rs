// SPDX-License-Identifier: GPL-2.0

//! The parser reads fields in the CPU's byte order, as C does (quirk 3). On this
//! little-endian host, a big-endian kernel is what the parser does with
//! [`Swapped`] fields: every case of the corpus, with its numeric fields
//! byte-swapped, must then give the result the C original gives on the case itself.

use buildid_elf::check::{self, Call};
use buildid_elf::corpus::{self, byte_swapped};
use buildid_elf::cref::{Entry, Mode};
use buildid_elf::elf::{ByteOrder, NativeEndian};

/// The byte order this host does not have.
struct Swapped;

impl ByteOrder for Swapped {
    fn u16(bytes: [u8; 2]) -> u16 {
        NativeEndian::u16(bytes).swap_bytes()
    }

    fn u32(bytes: [u8; 4]) -> u32 {
        NativeEndian::u32(bytes).swap_bytes()
    }

    fn u64(bytes: [u8; 8]) -> u64 {
        NativeEndian::u64(bytes).swap_bytes()
    }
}

#[test]
fn byte_swapped_corpus_parses_like_c_on_the_original() {
    let mut checked = 0;
    let mut swapped_bytes = 0;
    let mut wrong = Vec::new();
    for case in corpus::all() {
        let swapped = byte_swapped(&case.data, &case.fields);
        swapped_bytes += swapped
            .iter()
            .zip(&case.data)
            .filter(|(a, b)| a != b)
            .count();
        for chk in &case.checks {
            let mut file = case.file(&chk.cache);
            file.data = swapped.clone();
            let mut calls = vec![chk.call];
            if chk.call == Call::ParseElf(Mode::Nofault) {
                calls.push(Call::Entry(Entry::ParseNofault));
            }
            for call in calls {
                let what = format!("{}: {call:?} with cache {:?}", case.name, chk.cache);
                let (outcome, trace) = check::run_rust_as::<Swapped>(&file, call);
                if outcome != chk.expect.outcome(call) {
                    wrong.push(format!("{what}: {outcome:?}, not {:?}", chk.expect));
                }
                if chk.trace.is_some() && trace != chk.trace {
                    wrong.push(format!(
                        "{what}: read sequence {trace:?}, not {:?}",
                        chk.trace
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked > 200, "only {checked} checks");
    // The corpus has fields to swap: the test is not comparing identical images.
    assert!(swapped_bytes > 1000, "only {swapped_bytes} bytes differ");
}

#[test]
fn swapped_order_is_not_the_native_one() {
    // The native parser must not find the build ID of a byte-swapped image: otherwise the
    // test above would pass whatever byte order the parser reads in.
    let case = corpus::cases::elf64_valid();
    let swapped = byte_swapped(&case.data, &case.fields);
    let mut file = case.file(&corpus::Cache::All);
    file.data = swapped;
    let call = Call::ParseElf(Mode::Sleepable);
    let (native, _) = check::run_rust_as::<NativeEndian>(&file, call);
    let (swapped, _) = check::run_rust_as::<Swapped>(&file, call);
    assert_ne!(native.ret, 0);
    assert_eq!(swapped.ret, 0);
}
