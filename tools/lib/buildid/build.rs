// SPDX-License-Identifier: GPL-2.0

//! Compiles the kernel tree's C `lib/buildid.c` against the fake kernel headers in
//! `shim/`, so the tests can run the C reference and the Rust port side by side.
//!
//! The C file is found via `BUILDID_C_SOURCE`, else as
//! `$HOME/.cache/rust-buildid/tree/*/linux/lib/buildid.c`: the tree `make tree` writes,
//! the 6.12 file with the series' fixes to it, which the Rust port must match. The
//! unfixed file (`src/*/linux/lib/buildid.c`) also builds, for showing what the fixes
//! change. No code from it is kept in this repository: it is copied to `$OUT_DIR` at
//! build time only.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

const HINT: &str = "run `make tree` (it writes the patched kernel tree to \
                    ~/.cache/rust-buildid/tree/<version>/linux) or set \
                    BUILDID_C_SOURCE=/path/to/linux/lib/buildid.c";

fn fail(msg: &str) -> ! {
    // A panic in a build script fails the build and shows this message.
    panic!("\n\nbuildid-elf: {msg}\nTo fix: {HINT}\n\n");
}

/// Locates lib/buildid.c; returns the path and the directories to watch for changes.
fn find_source() -> (PathBuf, Vec<PathBuf>) {
    if let Some(p) = env::var_os("BUILDID_C_SOURCE") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            fail(&format!("BUILDID_C_SOURCE={} is not a file", p.display()));
        }
        return (p, Vec::new());
    }
    let Some(home) = env::var_os("HOME") else {
        fail("BUILDID_C_SOURCE is not set and HOME is not set either");
    };
    let root = Path::new(&home).join(".cache/rust-buildid/tree");
    let mut found: Vec<PathBuf> = fs::read_dir(&root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path().join("linux/lib/buildid.c"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    let Some(chosen) = found.pop() else {
        fail(&format!(
            "cannot find the C reference lib/buildid.c: BUILDID_C_SOURCE is not set and \
             {}/*/linux/lib/buildid.c does not exist",
            root.display()
        ));
    };
    if !found.is_empty() {
        println!(
            "cargo:warning=several kernel trees found, using {} (set BUILDID_C_SOURCE to choose)",
            chosen.display()
        );
    }
    (chosen, vec![root])
}

/// Reads `BUILD_ID_SIZE_MAX` from the tree's include/linux/buildid.h, if present.
fn tree_build_id_size_max(source: &Path) -> Option<(PathBuf, String)> {
    let header = source.parent()?.parent()?.join("include/linux/buildid.h");
    let text = fs::read_to_string(&header).ok()?;
    let value = text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("#define"), Some("BUILD_ID_SIZE_MAX"), Some(v)) => Some(v.to_string()),
            _ => None,
        }
    })?;
    Some((header, value))
}

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets it"));
    let shim = manifest.join("shim");

    println!("cargo:rerun-if-env-changed=BUILDID_C_SOURCE");
    println!("cargo:rerun-if-env-changed=HOME");
    println!("cargo:rerun-if-changed=shim");
    println!("cargo:rerun-if-changed=build.rs");

    let (source, watch) = find_source();
    for dir in &watch {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    println!("cargo:rerun-if-changed={}", source.display());

    let text = match fs::read_to_string(&source) {
        Ok(t) => t,
        Err(e) => fail(&format!("cannot read {}: {e}", source.display())),
    };
    // The shim calls these statics directly; make sure this is the C original.
    for needle in [
        "static int __build_id_parse(",
        "static int parse_build_id(",
        "static void freader_init_from_file(",
        "static void freader_init_from_mem(",
        "static void freader_cleanup(",
        "#define MAX_FREADER_BUF_SZ",
    ] {
        if !text.contains(needle) {
            fail(&format!(
                "{} does not look like the Linux 6.12 C lib/buildid.c (missing `{needle}`); \
                 point BUILDID_C_SOURCE at the tree's copy",
                source.display()
            ));
        }
    }
    let copy = out.join("buildid_ref.c");
    if let Err(e) = fs::write(&copy, &text) {
        fail(&format!("cannot write {}: {e}", copy.display()));
    }

    let size_max = match tree_build_id_size_max(&source) {
        Some((header, v)) => {
            println!("cargo:rerun-if-changed={}", header.display());
            v
        }
        None => {
            println!(
                "cargo:warning=no include/linux/buildid.h next to {}; assuming BUILD_ID_SIZE_MAX 20",
                source.display()
            );
            "20".to_string()
        }
    };

    println!("cargo:rustc-env=BUILDID_C_SOURCE_USED={}", source.display());

    cc::Build::new()
        .file(shim.join("buildid_shim.c"))
        .include(shim.join("include"))
        .include(&out)
        .define("SHIM_TREE_BUILD_ID_SIZE_MAX", size_max.as_str())
        // Same code generation assumptions as a kernel build of this file.
        .opt_level(2)
        .flag("-std=gnu11")
        // Keeps glibc from defining `loff_t` as `long` (the kernel's is `long long`).
        .define("_POSIX_C_SOURCE", "200809L")
        .flag("-fno-strict-aliasing")
        .flag("-fno-strict-overflow")
        .warnings(true)
        .extra_warnings(false)
        .compile("buildid_cref");
}
