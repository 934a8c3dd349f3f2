// SPDX-License-Identifier: GPL-2.0

//! Differential test: randomised, structure-aware inputs through the C original and
//! the Rust port in all modes; return code, 20 output bytes, size and (sleepable) read
//! sequence must be identical, and the C side must release every folio it takes.
//!
//! Default: 20000 inputs with a fixed seed. `BUILDID_FUZZ_SECONDS=N` additionally
//! runs a time-bounded randomised run (seed from `BUILDID_FUZZ_SEED`, else the clock).

use buildid_elf::check::{self, Call, Reader};
use buildid_elf::corpus::{self, Cache};
use buildid_elf::cref::Mode;
use buildid_elf::fuzz;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DEFAULT_CASES: u64 = 20_000;
const DEFAULT_SEED: u64 = 0x0062_7569_6c64_6964; // "buildid"

fn report(r: Result<fuzz::Stats, Box<fuzz::Failure>>) -> fuzz::Stats {
    match r {
        Ok(s) => s,
        Err(f) => panic!("{f}"),
    }
}

#[test]
fn corpus_all_modes_and_caches_agree() {
    let caches = [
        Cache::All,
        Cache::FolioSize(8192),
        Cache::FolioSize(65536),
        Cache::Only(vec![0]),
        Cache::NotUptodate(vec![1]),
    ];
    let mut n = 0;
    for case in corpus::all() {
        for cache in &caches {
            let file = case.file(cache);
            let len = case.data.len() as u32;
            let mut calls = vec![
                Call::ParseElf(Mode::Sleepable),
                Call::ParseElf(Mode::Nofault),
                Call::Buf,
            ];
            for r in Reader::ALL {
                for (off, size) in [
                    (0, len),
                    (64, len),
                    (-1, len),
                    (-100, 200),
                    (0x200, 36),
                    (0x200, 0xffff_ffff),
                ] {
                    calls.push(Call::Notes(r, off, size));
                }
            }
            for call in calls {
                if let Err(e) = check::run(&file, call).agreed() {
                    panic!("{} {call:?} cache {cache:?}: {e}", case.name);
                }
                n += 1;
            }
        }
    }
    println!("{n} corpus calls agree");
}

#[test]
fn random_inputs_agree() {
    let seed = std::env::var("BUILDID_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let stats = report(fuzz::run(seed, 0, Some(DEFAULT_CASES), None));
    println!(
        "seed {seed}: {} random inputs agree; build ID found in {}; sleepable results {:?}",
        stats.cases, stats.found, stats.rets
    );
    // The generator must exercise success and the main error paths.
    assert!(
        stats.found > DEFAULT_CASES / 20,
        "too few inputs with a build ID: {stats:?}"
    );
    for errno in [-22, -5, -14] {
        assert!(
            stats.rets.contains_key(&errno),
            "errno {errno} never produced: {stats:?}"
        );
    }
}

#[test]
fn timed_random_run() {
    let Some(secs) = std::env::var("BUILDID_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        println!("BUILDID_FUZZ_SECONDS not set: skipping the timed run");
        return;
    };
    let seed = std::env::var("BUILDID_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    println!("timed run: seed {seed}, {secs} s");
    let stats = report(fuzz::run(seed, 0, None, Some(Duration::from_secs(secs))));
    println!(
        "timed run: {} inputs agree; sleepable results {:?}",
        stats.cases, stats.rets
    );
}
