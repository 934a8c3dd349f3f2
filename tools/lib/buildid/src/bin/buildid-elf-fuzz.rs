// SPDX-License-Identifier: GPL-2.0

//! Long-running differential fuzzer: C `lib/buildid.c` vs. the Rust port.
//!
//! ```text
//! buildid-elf-fuzz [--seconds N] [--cases N] [--seed S] [--first N]
//! buildid-elf-fuzz --seed S --case N        # replay one case, verbosely
//! ```
//!
//! Defaults: 60 seconds, seed from the clock (printed, so a failure can be replayed).
//! Exits 1 on the first disagreement, printing the input and a replay command.

use buildid_elf::{corpus, fuzz};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn usage() -> ExitCode {
    eprintln!(
        "usage: buildid-elf-fuzz [--seconds N] [--cases N] [--seed S] [--first N] [--case N]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut seconds: Option<u64> = None;
    let mut cases: Option<u64> = None;
    let mut seed: Option<u64> = None;
    let mut first = 0u64;
    let mut replay: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let Some(v) = args.next().and_then(|v| v.parse::<u64>().ok()) else {
            return usage();
        };
        match a.as_str() {
            "--seconds" => seconds = Some(v),
            "--cases" => cases = Some(v),
            "--seed" => seed = Some(v),
            "--first" => first = v,
            "--case" => replay = Some(v),
            _ => return usage(),
        }
    }
    let seed = seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    println!(
        "buildid-elf-fuzz: C reference {}",
        buildid_elf::cref::C_SOURCE
    );

    if let Some(case) = replay {
        let input = fuzz::generate(seed, case, &corpus::all());
        println!("{input:#?}");
        return match fuzz::check_input(&input) {
            Ok(ret) => {
                println!("seed {seed} case {case}: C and Rust agree (sleepable ret {ret})");
                ExitCode::SUCCESS
            }
            Err(e) => {
                println!("seed {seed} case {case}: {e}");
                ExitCode::FAILURE
            }
        };
    }

    let time = if seconds.is_none() && cases.is_none() {
        Some(60)
    } else {
        seconds
    };
    println!("buildid-elf-fuzz: seed {seed}, first case {first}, time {time:?} s, cases {cases:?}");
    match fuzz::run(seed, first, cases, time.map(Duration::from_secs)) {
        Ok(stats) => {
            println!(
                "buildid-elf-fuzz: {} inputs, build ID found in {}, sleepable results {:?}",
                stats.cases, stats.found, stats.rets
            );
            println!("{} passed, 0 failed", stats.cases);
            ExitCode::SUCCESS
        }
        Err(f) => {
            println!("{f}");
            println!("0 passed, 1 failed");
            ExitCode::FAILURE
        }
    }
}
