// SPDX-License-Identifier: GPL-2.0

//! Checks on the source of `lib/buildid/elf.rs` and `freader.rs`, the two kernel files
//! this crate compiles: they must build as part of a `#![no_std]` crate with only `core`
//! and `kernel::error` (here `shim/kernel/`), under the kernel's lints and with overflow
//! checks, and contain no `unsafe`, no `unwrap()`, no `std` or `alloc` paths, and no
//! `kernel` path but the imports from `kernel::error`.

use std::path::PathBuf;
use std::process::Command;

/// The kernel files the crate compiles.
const SHARED: [&str; 2] = ["elf.rs", "freader.rs"];

fn kernel_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../lib/buildid")
        .join(name)
        .canonicalize()
        .unwrap()
}

/// Source lines without `//` comments (doc comments included).
fn code_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(kernel_file(name))
        .unwrap()
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => l[..i].to_string(),
            None => l.to_string(),
        })
        // Lint names such as `clippy::panic` are not uses.
        .map(|l| {
            if l.trim_start().starts_with("clippy::") {
                String::new()
            } else {
                l
            }
        })
        .collect()
}

#[test]
fn spdx_header() {
    for name in SHARED {
        let text = std::fs::read_to_string(kernel_file(name)).unwrap();
        assert!(
            text.starts_with("// SPDX-License-Identifier: GPL-2.0\n"),
            "{name}"
        );
    }
}

#[test]
fn no_forbidden_constructs() {
    for (name, n, line) in SHARED.iter().flat_map(|name| {
        code_lines(name)
            .into_iter()
            .enumerate()
            .map(move |(n, line)| (name, n, line))
    }) {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .collect();
        let imports_kernel_error = line.trim_start().starts_with("use kernel::error::");
        if !imports_kernel_error {
            assert!(
                !words.contains(&"kernel"),
                "{name}:{}: `kernel` in `{}`",
                n + 1,
                line.trim()
            );
        }
        for bad in [
            "unsafe",
            "std",
            "alloc",
            "unwrap",
            "expect",
            "panic",
            "unreachable",
            "todo",
        ] {
            assert!(
                !words.contains(&bad),
                "{name}:{}: `{bad}` in `{}`",
                n + 1,
                line.trim()
            );
        }
    }
}

#[test]
fn builds_as_no_std_with_kernel_lints() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("elf_no_std");
    std::fs::create_dir_all(&dir).unwrap();
    let root = dir.join("lib.rs");
    std::fs::write(
        &root,
        format!(
            "//! no_std build of elf.rs and freader.rs\n#![no_std]\n\
             extern crate self as kernel;\n\
             #[path = {:?}]\nmod kernel_shim;\npub use kernel_shim::error;\n\
             #[path = {:?}]\npub mod elf;\n#[path = {:?}]\npub mod freader;\n",
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("shim/kernel/lib.rs")
                .display()
                .to_string(),
            kernel_file("elf.rs").display().to_string(),
            kernel_file("freader.rs").display().to_string()
        ),
    )
    .unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    // The lint set of rust_common_flags in the kernel Makefile, as errors.
    let out = Command::new(&rustc)
        .args([
            "--edition=2021",
            "--crate-type=rlib",
            "--crate-name=buildid_elf_no_std",
            "--emit=metadata,link",
        ])
        .args([
            "-Dwarnings",
            "-Dnon_ascii_idents",
            "-Dunsafe_op_in_unsafe_fn",
            "-Dmissing_docs",
        ])
        .args(["-Drust_2018_idioms", "-Dunreachable_pub", "-Dunsafe_code"])
        .args([
            "-Coverflow-checks=on",
            "-Cdebug-assertions=on",
            "-Cpanic=abort",
        ])
        .arg("--out-dir")
        .arg(&dir)
        .arg(&root)
        .output()
        .expect("run rustc");
    assert!(
        out.status.success(),
        "rustc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
