// SPDX-License-Identifier: GPL-2.0

//! Host build of the kernel's Rust ELF build ID parser, with the tests that check
//! it against the C original.
//!
//! - [`elf`] is `rust/kernel/buildid/elf.rs` itself (included via `#[path]`, not a
//!   copy), i.e. the code that becomes `kernel::buildid::elf`.
//! - [`model`] holds host-only [`elf::ReadAt`] implementations modelling what the
//!   kernel's readers see: a sleepable `__kernel_read()` reader and a non-faulting
//!   page cache reader, both over an in-memory [`model::FileModel`].
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
//! `$HOME/.cache/rust-buildid/src/*/linux/lib/buildid.c` (`make tree`).

pub mod check;
pub mod corpus;
pub mod cref;
pub mod fuzz;
pub mod model;

#[path = "../../../../rust/kernel/buildid/elf.rs"]
pub mod elf;
