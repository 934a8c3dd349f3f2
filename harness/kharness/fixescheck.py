# SPDX-License-Identifier: GPL-2.0
"""'make fixes-check': the fixes series on its own, with its tests, on 6.12.117 with and without it.

The first series of patches/series is sent alone, for the bpf tree and
stable, so it has to stand alone: a kernel of the pristine tree with only
those patches, and its tests in tools/testing/selftests/bpf, must pass, and
each test must fail on the pristine kernel.  Two kernels of one
configuration (the test kernel's, without the options of the Rust series,
its packet sockets serving the ring test) are built, the test_progs build_id
test (-a: not stacktrace_build_id*, which a -t substring match would add)
is built once from the tree with the fixes, and the same binary runs in
each kernel.  The verdict:

 - with the fixes: every build_id subtest passes, and the kernel log is
   clean (lockdep, KASAN, UBSAN, hung tasks);
 - pristine: every subtest the fixes series adds fails, and lockdep
   reports the mmap_lock/inode lock inversion of the sleepable stack
   helpers: under virtme-ng the root is 9p, whose reads take the inode
   lock and then pin the user buffer (mmap_lock), and the sleepable
   subtests read files of the root under mmap_lock.

Not part of 'make test': two kernel builds (about 9 min each here), the
test's build and two boots (21 min in all from nothing built).
"""

import os
import re
import shlex
import time

from . import series
from .bpfselftests import PristineSource, build_selftests, parse_results
from .common import CACHE, REPO, info
from .kbuild import FRAGMENT, Kernel, parse_fragment
from .tally import Tally
from .tree import Source, project_files, stage_series
from .vm import boot

FIXES_SERIES = 1
TEST = "build_id"
# The subtests the fixes series adds, which must fail without it.
ADDED_SUBTEST = re.compile(r"^test_progs build_id/frames-")
# Options of the Rust series and of its tests, which these trees lack.
SERIES_OPTION = re.compile(r"RUST|BUILDID|SAMPLE|KUNIT")
ADDED_COUNT = 9
LOCKDEP_INVERSION = "possible circular locking dependency detected"
RUN_TIMEOUT = 1200


class FixesSource(Source):
    """A working tree of the pristine source with only the fixes series applied."""

    def __init__(self):
        super().__init__()
        self.use_work_base("-fixes")

    def generated_series(self):
        return os.path.join(CACHE, "series", self.key + "-fixes")

    def staged(self, repo=REPO):
        return stage_series(self.pristine, repo, self.generated_series(), parts=FIXES_SERIES)


def fixes_fragment():
    """The test kernel's fragment (packet sockets included) without the Rust series' options."""
    lines = [f"{sym}={val}" for sym, val in parse_fragment(FRAGMENT)
             if not SERIES_OPTION.search(sym)]
    path = os.path.join(CACHE, "build", "fixes-check.config")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def built_kernel(kernel):
    kernel.prepare_tree()
    kernel.configure()
    kernel.build_all()
    kernel.make("headers")
    return kernel


def guest_command(out):
    # A directory of its own, with no bpf_testmod.ko for test_progs to load:
    # the module was built for the kernel with the fixes.
    return ("mkdir -p /tmp/fixes-check && cd /tmp/fixes-check || exit 1; "
            f"ln -sf {shlex.quote(out)}/test_progs {shlex.quote(out)}/uprobe_multi . || exit 1; "
            f"echo '=== test_progs ==='; ./test_progs -v -a {TEST}; "
            "echo \"=== end test_progs status=$? ===\"; exit 0")


def run_kernel(name, kernel, out):
    result = boot(guest_command(out), kernel=kernel, cwd="/", timeout=RUN_TIMEOUT, memory="2G")
    text = result.file("guest-output.txt")
    results, runs = parse_results(text)
    info(f"{name}: {len(results)} results, run dir {result.run_dir}")
    return result, results, runs.get("test_progs", (None, None))


def verdict(tally, fixed_run, pristine_run):
    """The checks on the two runs, each (Boot, {test: result}, (status, summary))."""
    result, results, (status, summary) = fixed_run
    tally.check(summary is not None, f"with the fixes: test_progs -a {TEST} ran to its end "
                f"(status {status}; {summary or 'no summary'})")
    added = sorted(t for t in results if ADDED_SUBTEST.match(t))
    tally.check(len(added) >= ADDED_COUNT,
                f"with the fixes: the series' {len(added)} subtests ran (of {ADDED_COUNT})")
    for test, outcome in sorted(results.items()):
        tally.check(outcome == "OK", f"with the fixes: {test} {outcome}")
    for reason in result.failures(0):
        tally.check(False, f"with the fixes: {reason}")

    result, results, (status, summary) = pristine_run
    tally.check(summary is not None, f"pristine: test_progs -a {TEST} ran to its end "
                f"(status {status}; {summary or 'no summary'})")
    for test in added:
        # A test that passes without the fix it covers cannot fail.
        tally.check(results.get(test) == "FAIL",
                    f"pristine: {test} fails without the fixes ({results.get(test, 'not run')})")
    for test in sorted(t for t in results if t not in added):
        info(f"pristine: {test} {results[test]}")
    inversion = [line for line in result.splats if LOCKDEP_INVERSION in line]
    tally.check(bool(inversion), "pristine: lockdep reports the inversion that the sleepable "
                "stack helpers' parse under mmap_lock makes"
                + ("" if inversion else f" (kernel log: {result.run_dir}/dmesg.txt)"))
    for line in result.splats:
        print(f"# pristine kernel log: {line}")


def run_fixes_check():
    tally = Tally()
    t0 = time.monotonic()
    entries = series.load(REPO, project_files(REPO))
    fixes = entries.parts[FIXES_SERIES - 1]
    info(f"the {fixes.name} series: {fixes.count} patches, on Debian's 6.12 alone")
    fragment = fixes_fragment()
    fixed = Kernel(fragment=fragment, flavor="fixes")
    fixed.source = FixesSource()
    pristine = Kernel(fragment=fragment, flavor="fixes-pristine")
    pristine.source = PristineSource()
    for kernel in (fixed, pristine):
        built_kernel(kernel)
    out = build_selftests(fixed, selection=(TEST,), targets=("test_progs",))

    verdict(tally, run_kernel("with the fixes", fixed, out), run_kernel("pristine", pristine, out))
    info(f"fixes-check took {(time.monotonic() - t0) / 60:.0f} min")
    return tally.total()
