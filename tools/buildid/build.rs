// SPDX-License-Identifier: GPL-2.0

//! Compiles the BPF side of `buildid record-exits` and generates its libbpf skeleton.

use libbpf_cargo::SkeletonBuilder;
use std::{
    env,
    ffi::OsString,
    path::{Path, PathBuf},
};

const SRC: &str = "src/bpf/record_exits.bpf.c";

/// The clang that builds BPF: `$CLANG` as for the kernel's selftests, else `clang` on `PATH`,
/// else the newest versioned one (Debian 12 installs LLVM 19 as `clang-19` only).
fn find_clang() -> OsString {
    if let Some(clang) = env::var_os("CLANG") {
        return clang;
    }
    let path = env::var_os("PATH").unwrap_or_default();
    let on_path = |name: &str| env::split_paths(&path).any(|dir| is_executable(&dir.join(name)));
    let names =
        std::iter::once("clang".to_string()).chain((14..=30).rev().map(|v| format!("clang-{v}")));
    for name in names {
        if on_path(&name) {
            return name.into();
        }
    }
    // Let the build fail with the skeleton builder's own message.
    "clang".into()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let clang = find_clang();
    // <linux/bpf.h> includes <asm/types.h>, which Debian keeps under the host's triple.
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    let asm = format!("-idirafter/usr/include/{arch}-linux-gnu");
    SkeletonBuilder::new()
        .source(SRC)
        .clang(&clang)
        .clang_args(["-Wall", "-Werror", asm.as_str()])
        .build_and_generate(out.join("record_exits.skel.rs"))
        .unwrap_or_else(|e| {
            panic!(
                "building {SRC} with {}: {e} (a clang with the BPF target is needed; \
                 CLANG names it)",
                clang.to_string_lossy()
            )
        });
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-changed=src/bpf/record_exits.h");
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo:rerun-if-env-changed=PATH");
}
