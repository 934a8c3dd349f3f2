# SPDX-License-Identifier: GPL-2.0
"""'make bench': the benchmark kernel, buildid_bench in it, BENCHMARKS.md."""

import os
import shlex
import subprocess
import time

from .common import CACHE, HARNESS, REPO, HarnessError, info
from .guest import build_buildid_kselftests, build_tool
from .kbuild import BENCH_FRAGMENT, FRAGMENT, Kernel, build_kernel, merge_fragments
from .plot import ratio_svg, split_plot_lines
from .vm import boot

BENCH_LARGE_ELF = "/usr/bin/qemu-system-x86_64"
BENCH_DOC = os.path.join(REPO, "BENCHMARKS.md")
BENCH_PLOT = os.path.join(REPO, "BENCHMARKS.svg")


def measured_commit(repo=REPO):
    """The commit whose code the benchmark kernel is built from, as BENCHMARKS.md names it.

    A work tree with uncommitted changes to tracked files is measured too,
    but then the name says so: the numbers belong to no commit.  The files
    the benchmark writes do not count: a second run before committing the
    first one's still measures HEAD.
    """
    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                    *(f":!{os.path.basename(p)}" for p in (BENCH_DOC, BENCH_PLOT)))
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head} with uncommitted changes" if dirty else head


# The one part of BENCHMARKS.md that "make bench" does not write: comparisons
# of two commits, each measured by its own "make bench" on the same day and
# machine (rows move 10 to 15% between boots, so a claim that a change kept
# or recovered a row's speed needs both sides from one day).  It is the last
# section, kept as it is from one run to the next.
AB_HEADING = "## Same-day A/B runs"


def kept_ab_section(old_doc):
    """The A/B section of a BENCHMARKS.md, from its heading to the end, or ''."""
    at = old_doc.find("\n" + AB_HEADING + "\n")
    return old_doc[at + 1:] if at >= 0 else ""


def machine_description():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} host CPUs"


def run_bench():
    """Build the benchmark kernel, run buildid_bench in it, write BENCHMARKS.md."""
    commit = measured_commit()
    fragment = merge_fragments(FRAGMENT, BENCH_FRAGMENT,
                               os.path.join(CACHE, "build", "bench.config"))
    kernel = build_kernel(Kernel(fragment=fragment, flavor="bench"))
    kernel.make("headers")
    build_buildid_kselftests(kernel)
    bench = os.path.join(kernel.build, "kselftest", "buildid", "buildid_bench")
    script = os.path.join(HARNESS, "guest", "bench.sh")
    workloads = os.path.join(kernel.source.tree, "tools", "testing", "selftests", "buildid")
    tool = build_tool()
    result = boot(f"sh {shlex.quote(script)} {shlex.quote(bench)} {BENCH_LARGE_ELF} "
                  f"{shlex.quote(workloads)} {shlex.quote(tool)}",
                  kernel=kernel, cwd="/", timeout=1800)
    results = result.file("guest-output.txt")
    if result.failures() or "###" not in results:
        raise HarnessError(f"the benchmark run failed ({'; '.join(result.failures()) or 'no tables'}),"
                           f" see {result.run_dir}")
    tables, groups = split_plot_lines(results[results.index("###"):])
    if not groups:
        raise HarnessError(f"the benchmarks printed no ratios to plot, see {result.run_dir}")
    tables = tables.rstrip() + "\n"
    with open(BENCH_PLOT, "w") as f:
        f.write(ratio_svg(groups, "make bench: ratios, above 1 when the second-named is faster"))
    try:
        with open(BENCH_DOC) as f:
            ab = kept_ab_section(f.read())
    except FileNotFoundError:
        ab = ""
    with open(BENCH_DOC, "w") as f:
        f.write(BENCH_HEADER.format(
            date=time.strftime("%Y-%m-%d"), commit=commit, machine=machine_description(),
            kernel=kernel.kernel_version(), large=BENCH_LARGE_ELF,
            plot=os.path.basename(BENCH_PLOT)) + tables + ("\n" + ab if ab else ""))
    print(tables)
    info(f"wrote {BENCH_DOC} and {BENCH_PLOT}")
    return 0


BENCH_HEADER = """# Benchmarks

Written by `make bench` on {date}, measuring commit {commit}; every
ratio comes from one run, with both sides measured alternately in the same
boot, and every row gives the minimum and the median of its runs, with their
number.

![The ratios of the tables below, on a log scale](<{plot}>)

The picture ([{plot}](<{plot}>)) shows the medians' ratios of the tables below:
C time / Rust time for each parser row, text time / PROCMAP_QUERY time for
each process and batch.  A bar right of 1 means that Rust (or the ioctl) is
faster.

- **Kernel**: Linux {kernel} with `kernel/configs/buildid.config` minus the
  debug options (`kernel/configs/buildid-bench.config`: no KASAN, UBSAN,
  lockdep, kmemleak, `DEBUG_VM`, atomic-sleep checks or Rust overflow
  checks).
- **Machine**: QEMU under TCG (no KVM: nested virtualization does not work
  here), 2 vCPUs, 2 GiB, on {machine}.  TCG emulates every instruction, so
  absolute times are far above native ones, and an instruction's cost under
  TCG is not its cost in silicon: a system call or a page-table walk costs
  relatively more than arithmetic.  Ratios between two code paths doing the
  same work are what these numbers are for, and even they can move on real
  hardware.
- **Method**: `tools/testing/selftests/buildid/buildid_bench.c` and
  `procmap_bench.c` in the guest (`harness/guest/bench.sh`).  The parser rows
  use the `BUILDID_IOC_BENCH` ioctl of `/dev/buildid`
  (`samples/rust/rust_buildid.rs`), which runs one entry point N times in the
  kernel and returns the time: the Rust implementation
  (`build_id_rust_parse_file()`), or the C one of `lib/buildid.c` built as
  `build_id_ref_*()` (`CONFIG_BUILDID_C_REFERENCE`), each called as a module
  calls an exported function.
  Files live on an ext4 image so that "evicted" can drop the page cache
  before each parse.  "Large binary" is `{large}`.  The PROCMAP_QUERY rows
  profile two real processes, `buildid_workload.py` (python3 with the
  standard library's extension modules loaded, working in many of them) and
  `buildid_workload.pl` (perl with about thirty XS modules), whose files are
  copied to the ext4 image and bind-mounted over the originals: vng's `/` is
  9p, where each `open()` or `stat()` of the text side would be a round trip
  to the host.  Any process can be measured the same way:
  `procmap_bench NAME=pid:PID` samples it, `NAME=pid:PID:FILE` takes its
  addresses from FILE (see the program's header).
- **Three implementations**: the C reference, the Rust parser without the
  build ID cache, and Rust as the kernel's callers reach it, through the
  cache (`CONFIG_BUILDID_CACHE`, on by default).  The benchmark ioctl picks
  one per call; rows whose caller is the kernel itself (perf, exec, mmap,
  `PROCMAP_QUERY`) compare the cache off (`kernel.buildid_cache.enabled=0`)
  with on, and say so.
- **What differs between the implementations**: with cached data the
  sleepable C path calls `__kernel_read()` for every fetch of at most 64
  bytes, where the Rust one copies from the page cache.  Both read the ELF
  fields in place in the folio; the Rust reader loads each field by value
  with one volatile load (no Rust reference into memory that a writer may
  change) and compiles the parse for each ELF class with its fetches
  inlined, but calls out-of-line C helpers for each folio (one that looks
  it up and returns its position, size and address, and the reference
  drop), where C uses inline functions; a cache hit makes one call, which
  reads the inode fields it compares with their C accessors.
  Evicted data costs a read from the block device either way.

"""
