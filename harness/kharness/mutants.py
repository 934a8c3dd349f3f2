# SPDX-License-Identifier: GPL-2.0
"""'make mutants': the reliability tests must catch broken readers and lookups.

Mutants of the files the host crate compiles (the readers and the parser)
must also fail the host tests; 'make test' checks that in its host stage
(host_mutant_checks), in a copy of the repository.

Each mutant is one small change to a reader, of a kind that build ID readers
have had or could easily have.  The kernel is built with it and booted
once; the buildid_kunit suites and a set of the buildid_dev kselftest cases
run, and the mutant is caught when every case it names reports "not ok".
A first run without any change shows that those cases pass, so that a
failure under a mutant is the mutant's doing.  The tree and the build are
put back as they were at the end, whatever happened.
"""

import os
import shlex
import shutil
import sys
import tempfile
import time

from . import tap
from .common import CACHE, CARGO, HARNESS, REPO, HarnessError, info, stream
from .guest import build_buildid_kselftests, cargo_env, kunit_guest_command
from .kbuild import Kernel, build_kernel
from .series import PATCHES
from .parsers import cargo_counts
from .tally import Tally, banner
from .tree import project_files
from .vm import boot

FREADER = "lib/buildid/freader.rs"

# The buildid_dev cases every run asks for: partly cached files on three
# file systems, I/O errors, files past 4 GiB and offsets past 2^63;
# file_query drops a file it has parsed from the page cache.
KSELFTEST_CASES = ("dev.file_query", "dev.sparse_file_beyond_4g", "dev.partly_cached_ext4",
                   "dev.partly_cached_xfs", "dev.partly_cached_tmpfs_huge",
                   "dev.io_error_sleepable", "dev.negative_positions_ext4",
                   "dev.negative_positions_xfs")


class Mutant:
    def __init__(self, name, why, path, old, new, must_fail):
        self.name = name
        self.why = why
        self.path = path
        self.old = old
        self.new = new
        # "SUITE/CASE" of KUnit, or "buildid_dev/FIXTURE.CASE".
        self.must_fail = must_fail


MUTANTS = (
    Mutant("cross_folio_off_by_one",
           "the part of a fetch that comes from the next folio is copied from one byte on",
           FREADER,
           "            folio.read(offset, dst)?;\n",
           "            folio.read(offset + usize::from(done > 0), dst)?;\n",
           ["buildid_file/buildid_tmpfs_note_crosses_folio",
            "buildid_dev/dev.partly_cached_ext4"]),
    Mutant("no_uptodate_check",
           "the page cache lookup hands out a folio whose read has not completed or failed",
           "rust/helpers/pagemap.c",
           "\tif (!folio_test_uptodate(folio)) {\n"
           "\t\tfolio_put(folio);\n"
           "\t\treturn NULL;\n"
           "\t}\n",
           "",
           ["buildid_file/buildid_blockfs_not_uptodate",
            "buildid_dev/dev.io_error_sleepable"]),
    Mutant("folio_reference_leaked",
           "moving to another folio, or to a read, never puts the reference to the last one",
           FREADER,
           "        self.kept_len = 0;\n"
           "        self.folio = None;\n",
           "        self.kept_len = 0;\n"
           "        core::mem::forget(self.folio.take());\n",
           ["buildid_file/buildid_tmpfs_note_crosses_folio",
            "buildid_dev/dev.partly_cached_ext4",
            "buildid_dev/dev.partly_cached_xfs"]),
    Mutant("short_read_not_eio",
           "a sleepable read that comes back short counts as complete",
           FREADER,
           "            _ => Err(EIO),\n",
           "            _ => Ok(()),\n",
           ["buildid_file/buildid_tmpfs_truncated"]),
    Mutant("negative_position_read",
           "the sleepable reader reads at a negative file position, where the buffered "
           "read of a block file system never returns",
           FREADER,
           "        if offset < 0 {\n"
           "            return Err(EIO);\n",
           "        if offset < 0 && buf.is_empty() {\n"
           "            return Err(EIO);\n",
           ["buildid_dev/dev.negative_positions_ext4",
            "buildid_dev/dev.negative_positions_xfs"]),
    Mutant("note_budget_ignored",
           "the note walk takes note headers from its budget without counting them down, "
           "so a parse reads as many as the PT_NOTE segments hold",
           "lib/buildid/elf.rs",
           "                self.notes_left = left;\n",
           "                let _ = left;\n",
           ["buildid_file/buildid_tmpfs_note_budget"]),
    Mutant("one_writer_ignored",
           "the cache fills and serves entries of files that one task holds open for write",
           "lib/buildid/cache.rs",
           "        self.0.write_count <= 0\n",
           "        self.0.write_count <= 1\n",
           ["buildid_cache/buildid_cache_writable_not_cached"]),
    Mutant("vma_write_lock_ignored",
           "the lockless VMA read serves a VMA that a writer has write-locked",
           "patches/0018-mm-read-the-vma-that-maps-an-address-without-locking-it.patch",
           "+\tif (seq == raw_read_seqcount(&mm->mm_lock_seq))\n",
           "+\tif (0 && seq == raw_read_seqcount(&mm->mm_lock_seq))\n",
           ["buildid_cache/buildid_cache_vma_without_mmap_lock"]),
    Mutant("unpinned_reference_not_rechecked",
           "a lockless miss queues a fill of the file it took a reference to without "
           "checking that the VMA still maps it",
           "lib/buildid_cache.c",
           "\tif (!vma_snapshot_unchanged(snap)) {\n",
           "\tif (0 && !vma_snapshot_unchanged(snap)) {\n",
           ["buildid_cache/buildid_cache_vma_locked_after_reference",
            "buildid_cache/buildid_cache_vma_unmapped_after_reference"]),
)

# The kernel files the host crate (tools/lib/buildid) compiles: a mutant of
# one of them must also fail the host tests, which 'make test' checks.
HOST_COMPILED = (FREADER, "lib/buildid/elf.rs")
# What the host crate needs besides the kernel tree's files.
HOST_WORKSPACE = ("Cargo.toml", "Cargo.lock")
# Enough for a release build and run of the host tests (40 to 60 s).
HOST_MUTANT_SECONDS = 150


def mutated_repo(dest, mutant):
    """Copy the files and patches the overlay takes from the repository, with mutant applied."""
    patches = [os.path.join("patches", name) for name in sorted(os.listdir(PATCHES))]
    for rel in project_files(REPO) + patches + ["BENCHMARKS.md"]:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(os.path.join(REPO, rel), os.path.join(dest, rel))
    if mutant is None:
        return
    path = os.path.join(dest, mutant.path)
    with open(path) as f:
        text = f.read()
    if text.count(mutant.old) != 1:
        raise HarnessError(f"mutant {mutant.name}: the text to change is not in "
                           f"{mutant.path} exactly once (found {text.count(mutant.old)})")
    with open(path, "w") as f:
        f.write(text.replace(mutant.old, mutant.new))


def host_mutant_checks(tally, c_source):
    """Run the host tests on each mutant of a file they compile: they must fail.

    They run first on the copy without a mutant, which must pass, so that a
    failure is the mutant's doing and not the copy's.  c_source is the
    lib/buildid.c the differential tests compile (the copy has no tree).
    """
    env = dict(cargo_env(c_source), CARGO_TARGET_DIR=os.path.join(CACHE, "host-mutants-target"))
    for mutant in [None] + [m for m in MUTANTS if m.path in HOST_COMPILED]:
        name = mutant.name if mutant else "(no mutant)"
        with tempfile.TemporaryDirectory(prefix="buildid-host-mutant.") as repo:
            mutated_repo(repo, mutant)
            for rel in HOST_WORKSPACE:
                shutil.copy2(os.path.join(REPO, rel), os.path.join(repo, rel))
            # A mutant may also make a test slow (a short read taken as complete
            # walks a 4 GiB note segment of zeroes): the run is cut off, and the
            # failures reported by then are what counts.
            status, output, _ = stream(["timeout", str(HOST_MUTANT_SECONDS), CARGO, "test",
                                        "--release", "--no-fail-fast", "-p", "buildid-elf",
                                        "--color", "never"],
                                       f"host tests with mutant {name}", cwd=repo,
                                       env=env, quiet=True)
        passed, failed = tests_run(output)
        if mutant is None:
            if not tally.check(status == 0 and passed > 0 and failed == 0,
                               f"the host tests pass in a copy of the repository "
                               f"({passed} pass, {failed} fail)"):
                sys.stdout.write(output)
                return
            continue
        tally.check(status != 0 and failed > 0,
                    f"mutant {mutant.name} ({mutant.why}) fails {failed} host tests "
                    f"({passed} pass)")


def tests_run(output):
    """(passed, failed) as cargo's test binaries reported them.

    Unlike cargo_counts(), a failing cargo that ran no test (a mutant that
    does not build) counts no failure: a mutant is only caught by a test.
    """
    return cargo_counts(output, 0)


def failed_cases(result):
    """({"SUITE/CASE" reported not ok}, {every "SUITE/CASE" reported}) of one boot."""
    failed, reported = set(), set()
    kselftest = result.file("guest-output.txt").partition("=== buildid_dev ===")[2]
    for documents, suite in ((tap.parse_ktap(result.file("dmesg.txt")), None),
                             (tap.parse_kselftest(kselftest), "buildid_dev")):
        for block in tap.blocks(documents):
            for r in block.results:
                # A KUnit suite's own result is at the top level, unnamed.
                prefix = suite or block.name
                name = f"{prefix}/{r.name}" if prefix else r.name
                reported.add(name)
                if not r.ok:
                    failed.add(name)
    return failed, reported


def boot_cases(kernel):
    script = os.path.join(HARNESS, "guest", "kselftest-cases.sh")
    program = os.path.join(kernel.build, "kselftest", "buildid", "buildid_dev")
    cases = " ".join(f"-r {shlex.quote(c)}" for c in KSELFTEST_CASES)
    command = (f"{kunit_guest_command()}; echo '=== buildid_dev ==='; "
               f"sh {shlex.quote(script)} {shlex.quote(program)} {cases}; exit 0")
    return boot(command, kernel=kernel, cwd="/", timeout=1800,
                rwdirs=[os.path.join(kernel.build, "kselftest")])


def run_mutants(names=()):
    chosen = [m for m in MUTANTS if not names or m.name in names]
    unknown = set(names) - {m.name for m in MUTANTS}
    if unknown:
        raise HarnessError(f"unknown mutant(s) {', '.join(sorted(unknown))}; known: "
                           + ", ".join(m.name for m in MUTANTS))
    kernel = Kernel().prepare()
    tally = Tally()
    rows = []
    try:
        for mutant in [None] + chosen:
            name = mutant.name if mutant else "(no mutant)"
            banner(f"mutant {name}")
            t0 = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="buildid-mutant.") as repo:
                mutated_repo(repo, mutant)
                kernel.source.overlay(repo=repo)
            try:
                kernel.build_all()
            except HarnessError as e:
                tally.check(False, f"{name}: does not build: {e}")
                rows.append((name, "does not build", ""))
                continue
            if mutant is None:
                build_buildid_kselftests(kernel)
            result = boot_cases(kernel)
            failed, reported = failed_cases(result)
            splats = len(result.splats)
            info(f"{name}: {len(failed)} of {len(reported)} reported cases failed "
                 f"({', '.join(sorted(failed)) or 'none'}), {splats} splat line(s), "
                 f"{time.monotonic() - t0:.0f} s")
            named = [c for m in chosen for c in m.must_fail]
            if mutant is None:
                for case in sorted(set(named)):
                    tally.check(case in reported and case not in failed,
                                f"without a mutant, {case} passes")
                tally.check(result.status == 0 and not splats,
                            f"without a mutant, the guest exits 0 with a clean log "
                            f"(status {result.status}, {splats} splat lines)")
                continue
            for case in mutant.must_fail:
                tally.check(case in failed, f"{name}: {case} fails")
            rows.append((name, mutant.why, ", ".join(sorted(failed)) or "none"))
    finally:
        banner("putting the tree and the build back")
        build_kernel(kernel)
    print()
    for name, why, failed in rows:
        print(f"{name}: {why}\n    failing: {failed}")
    return tally.total()
