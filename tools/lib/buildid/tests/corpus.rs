// SPDX-License-Identifier: GPL-2.0

//! The crafted corpus: every check of every case must give the stated result in the
//! C original *and* in the Rust port (and both must issue the same reads).

use buildid_elf::check::{self, Call};
use buildid_elf::corpus::{self, Case};
use buildid_elf::cref::{Entry, Mode};

fn check_case(case: &Case) {
    assert!(!case.checks.is_empty(), "{}: no checks", case.name);
    for chk in &case.checks {
        let file = case.file(&chk.cache);
        let want = chk.expect.outcome(chk.call);
        let mut calls = vec![chk.call];
        // The exported entry points must behave like __build_id_parse() itself.
        match chk.call {
            Call::ParseElf(Mode::Sleepable) => {
                calls.extend([Call::Entry(Entry::Parse), Call::Entry(Entry::ParseFile)])
            }
            Call::ParseElf(Mode::Nofault) => calls.push(Call::Entry(Entry::ParseNofault)),
            _ => {}
        }
        for call in calls {
            let what = format!("{}: {call:?} with cache {:?}", case.name, chk.cache);
            let obs = check::run(&file, call);
            assert_eq!(
                obs.c, want,
                "{what}: the C original does not give the stated result"
            );
            assert_eq!(
                obs.rust, want,
                "{what}: the Rust port does not give the stated result"
            );
            if let Err(e) = obs.agreed() {
                panic!("{what}: {e}");
            }
            if let Some(trace) = &chk.trace {
                assert_eq!(obs.c_trace.as_ref(), Some(trace), "{what}: C read sequence");
            }
        }
    }
}

macro_rules! corpus_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let case = corpus::cases::$name();
                assert_eq!(case.name, stringify!($name));
                check_case(&case);
            }
        )*
    };
}
buildid_elf::with_corpus_names!(corpus_tests);

#[test]
fn corpus_is_large_and_names_are_unique() {
    let all = corpus::all();
    let elf_cases = all
        .iter()
        .filter(|c| c.data.starts_with(b"\x7fELF"))
        .count();
    assert!(elf_cases >= 40, "only {elf_cases} ELF images in the corpus");
    let mut names: Vec<_> = all.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len());
}

#[test]
fn vma_without_file() {
    use buildid_elf::cref::build_id_parse_anon_vma;
    assert_eq!(
        build_id_parse_anon_vma(false),
        kernel::error::code::EINVAL.to_errno()
    );
    assert_eq!(
        build_id_parse_anon_vma(true),
        kernel::error::code::EINVAL.to_errno()
    );
}

#[test]
fn build_id_size_max_matches_tree_header() {
    assert_eq!(
        buildid_elf::cref::build_id_size_max(),
        buildid_elf::elf::BUILD_ID_SIZE_MAX
    );
}
