// SPDX-License-Identifier: GPL-2.0

//! Compiles the BPF side of `buildid record-exits` and generates its libbpf skeleton.

use libbpf_cargo::SkeletonBuilder;
use std::{env, path::PathBuf};

const SRC: &str = "src/bpf/record_exits.bpf.c";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // CLANG names the clang that builds BPF, as for the kernel's selftests.
    let clang = env::var_os("CLANG").unwrap_or_else(|| "clang".into());
    // <linux/bpf.h> includes <asm/types.h>, which Debian keeps under the host's triple.
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    let asm = format!("-idirafter/usr/include/{arch}-linux-gnu");
    SkeletonBuilder::new()
        .source(SRC)
        .clang(clang)
        .clang_args(["-Wall", "-Werror", asm.as_str()])
        .build_and_generate(out.join("record_exits.skel.rs"))
        .expect("building src/bpf/record_exits.bpf.c (clang with the BPF target needed)");
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-changed=src/bpf/record_exits.h");
    println!("cargo:rerun-if-env-changed=CLANG");
}
