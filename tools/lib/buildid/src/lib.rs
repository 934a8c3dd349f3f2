// SPDX-License-Identifier: GPL-2.0

//! Host build of the kernel's Rust ELF build ID parser and file readers, with the tests
//! that check them against the C original.
//!
//! - [`elf`] is `lib/buildid/elf.rs` itself and [`freader`] is `lib/buildid/freader.rs`
//!   itself (included via `#[path]`, not copies): the code that the kernel builds into its
//!   Rust `lib/buildid`. The `kernel::error` they use is `shim/kernel/`, which has the
//!   kernel's names and values.
//! - [`model`] is a model of a file and its page cache, the [`freader::PageCache`] the
//!   kernel's readers run on here: folios of any size, absent, not uptodate or evicted at
//!   random during a parse, and `__kernel_read()`.
//! - [`cref`] runs the *C* `lib/buildid.c` of the kernel tree (compiled by `build.rs`
//!   against the fake headers in `shim/`) on the same [`model::FileModel`].
//! - [`corpus`] is a small ELF/note builder and a corpus of crafted inputs with their
//!   expected results; [`fuzz`] is the deterministic differential fuzzer.
//!
//! # Running
//!
//! ```text
//! cargo test -p buildid-elf                      # corpus, truncation, 20000 random cases
//! BUILDID_FUZZ_SECONDS=600 cargo test -p buildid-elf --release --test differential
//! cargo run -p buildid-elf --release --bin buildid-elf-fuzz -- --seconds 600 [--seed N]
//! ```
//!
//! The C source is taken from `BUILDID_C_SOURCE`, else from
//! `$HOME/.cache/rust-buildid/tree/*/linux/lib/buildid.c` (`make tree`): 6.12's file with
//! the series' fixes to it.

pub mod check;
pub mod corpus;
pub mod cref;
pub mod fuzz;
pub mod model;

#[path = "../../../../lib/buildid/freader.rs"]
pub mod freader;

#[path = "../../../../lib/buildid/elf.rs"]
pub mod elf;
