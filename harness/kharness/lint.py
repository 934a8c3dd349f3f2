# SPDX-License-Identifier: GPL-2.0
"""The lint stage: formatting, checkpatch, clippy's SAFETY comments, and the series.

Clippy runs in the kernel build itself (kbuild.toolchain_vars): every Rust
object is compiled by clippy-driver with kbuild.UNSAFE_LINT, and the build
fails on any warning in the project's files.  This stage checks, from
kbuild's record of each command, that the objects of the project's Rust
files were linted so.
"""

import os
import re
import subprocess
import sys
import tempfile

from .common import REPO
from .kbuild import UNSAFE_LINT, rust_object
from .seriescheck import am_check, checkpatch_strict, generate
from .tally import Tally
from .tree import project_files

# Checkpatch types that do not apply to one file, each with the reason.
CHECKPATCH_EXCEPTIONS = {
    # The exported functions are defined in lib/buildid.c, which this file
    # #includes under other names, so no export can follow its definition.
    "lib/buildid_ref.c": ["EXPORT_SYMBOL"],
    # FUSE's protocol: a reply of -ENOSYS says the server does not implement
    # the request, which the kernel then stops sending.
    "tools/testing/selftests/buildid/buildid_fuse.c": ["ENOSYS"],
    # A BPF program declares the kfuncs it calls as __ksym externs, as the
    # other programs of selftests/bpf do.
    "tools/testing/selftests/bpf/progs/verifier_vma_build_id.c": ["AVOID_EXTERNS"],
    "tools/testing/selftests/bpf/progs/vma_build_id.c": ["AVOID_EXTERNS"],
    # lib/buildid.c's code, moved unchanged: the linker script's notes
    # symbols, declared in the one function that uses them.
    "lib/buildid_vmlinux.c": ["AVOID_EXTERNS"],
}

# The first line of a .cmd file kbuild writes next to each object:
# "savedcmd_rust/kernel.o := <the command that built it>".
SAVED_COMMAND = re.compile(r"^savedcmd_\S+ := (.*)$", re.M)


def kbuild_record(build, obj):
    """The text of kbuild's .cmd file of obj, or None if obj or the file is not there."""
    path = os.path.join(build, obj)
    record = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.cmd")
    if not (os.path.exists(path) and os.path.exists(record)):
        return None
    with open(record, errors="replace") as f:
        return f.read()


def dependencies(record):
    """The files kbuild's record says its object was built from ("deps_OBJ := \\ FILE \\ ...")."""
    m = re.search(r"^deps_\S+ := \\\n((?:  .*\n)*)", record, re.M)
    if not m:
        return []
    return [line.strip().rstrip("\\").strip() for line in m.group(1).splitlines()]


def unsafe_lint_problem(obj, record, source):
    """Why kbuild's record of obj does not show clippy's UNSAFE_LINT passing source, or None.

    record is the text of obj's .cmd file, None if obj is not there; source
    is the project's file, relative to the tree.  The build removes an
    object of the project in which any warning was found
    (kbuild.Kernel.build_all), so an object that is there, compiled from
    source by clippy-driver with the lint on, had no unsafe block or impl
    without a SAFETY comment in it.  Code that a cfg of the test
    configuration leaves out is not compiled, and so not linted.
    """
    if record is None:
        return f"{obj} is not built (the build finds a warning in it, or never ran)"
    m = SAVED_COMMAND.search(record)
    if not m:
        return f"kbuild's record of {obj} holds no command"
    words = m.group(1).split()
    if not any(os.path.basename(w) == "clippy-driver" for w in words):
        return f"{obj} was not compiled by clippy-driver"
    if UNSAFE_LINT not in words:
        return f"{obj} was compiled without {UNSAFE_LINT}"
    if not any(d == source or d.endswith("/" + source) for d in dependencies(record)):
        return f"{source} is not among the sources of {obj} (no mod declares it?)"
    return None


def stage_lint(kernel):
    """rustfmt, checkpatch and clippy's SAFETY comment lint on the project's kernel files."""
    tally = Tally()
    # The host crates under tools/ follow cargo fmt, not the kernel's style;
    # the kselftests are kernel C.
    files = [f for f in project_files(REPO)
             if not f.startswith("tools/") or f.startswith("tools/testing/selftests/")]
    rust = [os.path.join(REPO, f) for f in files if f.endswith(".rs")]
    checks = []
    if rust:
        checks.append(("rustfmt --check (kernel .rustfmt.toml)",
                       ["rustfmt", "--check", "--edition", "2021", "--config-path",
                        os.path.join(kernel.source.tree, ".rustfmt.toml")] + rust))
    checks.append(("cargo fmt --check (host crates)", ["cargo-fmt", "--all", "--check"]))
    checkpatch = os.path.join(kernel.source.tree, "scripts", "checkpatch.pl")
    for f in files:
        if f.endswith((".c", ".h", ".rs")):
            ignore = ",".join(["FILE_PATH_CHANGES"] + CHECKPATCH_EXCEPTIONS.get(f, []))
            checks.append((f"checkpatch {f}",
                           ["perl", checkpatch, "--no-tree", "--quiet", "--show-types",
                            "--ignore", ignore, "-f", os.path.join(REPO, f)]))
    for f in [f for f in files if f.endswith(".rs")]:
        obj = rust_object(f)
        problem = unsafe_lint_problem(obj, kbuild_record(kernel.build, obj), f)
        tally.check(problem is None, f"every unsafe block in {f} has a SAFETY comment "
                    f"(clippy::undocumented_unsafe_blocks in {obj})"
                    + (f": {problem}" if problem else ""))
    elf = os.path.join(REPO, "lib", "buildid", "elf.rs")
    with open(elf) as fh:
        code = "\n".join(line.split("//", 1)[0] for line in fh)
    tally.check(not re.search(r"\bunsafe\b", code), "the ELF parser has no unsafe code")
    for name, cmd in checks:
        proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if not tally.check(proc.returncode == 0 and not proc.stdout.strip(), name):
            sys.stdout.write(proc.stdout)
    # The series as sent: checkpatch --strict with sign-offs and commit
    # messages checked, and git am of it equal to the tree that was built.
    with tempfile.TemporaryDirectory(prefix="buildid-lint-series.") as tmp:
        _covers, patches, _entries, _source = generate(tmp)
        checkpatch_strict(patches, checkpatch, tally)
    am_check(kernel, tally)
    return tally
