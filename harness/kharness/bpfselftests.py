# SPDX-License-Identifier: GPL-2.0
"""'make bpf-selftests': upstream's BPF selftests on the pristine and the patched kernel.

The series changes the verifier (callback-scoped VMA trust, the task_vma
iterator) and the stack map helpers, and our own tests only cover what we
thought of.  Upstream's test_verifier and the test_progs tests that touch
callbacks, iterators, kfuncs and VMAs are the regression suite: each is
built from the same 6.12 tree for two kernels of one configuration, Debian's
pristine source and the source with the series, and run in each.  A test
that passes on pristine and does not pass on ours fails the run; every
other difference is listed.

Not part of 'make test': the first run builds two kernels with the
selftests' networking options (about 26 min each here); with them built,
a run takes about 11 min (each kernel's test_progs subset builds in under
2 min, and each boot runs for about 4 min under TCG).
"""

import os
import re
import shlex
import time

from . import series
from .common import CACHE, REPO, HarnessError, info, stream
from .guest import BPF_CLANG
from .kbuild import BENCH_FRAGMENT, FRAGMENT, Kernel, check_config, merge_fragments, \
    parse_config, parse_fragment, toolchain_vars
from .parsers import marked_section
from .stages import link_subset
from .tally import Tally
from .tree import Source
from .vm import boot

# Upstream's own configuration for its BPF CI, in the order they are laid
# over each other, below ours: our options win, so that the kernel still
# boots under virtme-ng and is the one the other tests run.
SELFTEST_CONFIGS = ("config.x86_64", "config.vm", "config")

# The test_progs tests that exercise what the series changes: the verifier
# (verifier_* are upstream's verifier tests in C), callbacks and their
# arguments (find_vma, bpf_loop, for_each, user_ringbuf, timer, rbtree,
# cb_refs, exceptions), iterators (iters, bpf_iter), kfuncs, and the build
# ID paths of the stack map helpers (build_id, stacktrace_build_id*).
# test_progs -t matches each as a substring.
TEST_PROGS_SELECTION = ("verifier", "iters", "find_vma", "bpf_iter", "kfunc_call", "cb_refs",
                        "build_id", "bpf_loop", "for_each", "user_ringbuf", "timer", "rbtree",
                        "exceptions")

# Upstream's fragments assume a defconfig base; on our allnoconfig one,
# their network devices (veth, tun, vxlan, netkit...) also need these,
# and since config.x86_64 sets EXPERT, under which allnoconfig turns off
# /proc/sys, so does everything that reads a sysctl (test_progs, and our
# switch that turns the build ID cache off for upstream's build_id test).
DEFCONFIG_ASSUMED = ("CONFIG_NETDEVICES=y", "CONFIG_NET_CORE=y", "CONFIG_PROC_SYSCTL=y")

BUILDID_CACHE_SWITCH = "/proc/sys/kernel/buildid_cache/enabled"

# Each boot takes about 4 min under TCG.
RUN_TIMEOUT = 1800


class PristineSource(Source):
    """A copy of Debian's source without the series, to build the reference kernel in.

    The pristine extraction itself stays untouched: bpf_testmod is built in
    its source directory.
    """

    def __init__(self):
        super().__init__()
        self.use_work_base("-pristine")

    def overlay(self, repo=REPO):
        return [], self.ensure_tree()


def selftest_fragment(tree):
    """Upstream's selftest configuration under ours (the benchmark kernel's: no debug options)."""
    src = os.path.join(tree, "tools", "testing", "selftests", "bpf")
    out_dir = os.path.join(CACHE, "build")
    merged = os.path.join(out_dir, "bpf-selftests.0.config")
    with open(merged, "w") as f:
        f.write("\n".join(DEFCONFIG_ASSUMED) + "\n")
    for name in SELFTEST_CONFIGS:
        merged = merge_fragments(merged, os.path.join(src, name),
                                 os.path.join(out_dir, f"bpf-selftests.{name}"))
    ours = merge_fragments(merged, FRAGMENT, os.path.join(out_dir, "bpf-selftests.ours.config"))
    return merge_fragments(ours, BENCH_FRAGMENT, os.path.join(out_dir, "bpf-selftests.config"))


def configure_and_build(kernel, tolerate):
    kernel.prepare_tree()
    kernel.configure(tolerate=tolerate)
    kernel.build_all()
    kernel.make("headers")
    return kernel


def config_differences(patched, pristine, added):
    """Options whose values differ between the two .configs, other than the series' own.

    An option the series adds, and any option that only exists because of
    one (a bool that only its menu shows), is in one config and not in the
    other: those are the expected differences.
    """
    a = parse_config(os.path.join(patched.build, ".config"))
    b = parse_config(os.path.join(pristine.build, ".config"))
    return sorted(f"{sym}: ours {a.get(sym, 'not set')}, pristine {b.get(sym, 'not set')}"
                  for sym in set(a) | set(b) if a.get(sym) != b.get(sym) and sym not in added)


SKELETON = re.compile(r'#include\s+"(\w+)\.(skel|lskel|subskel)\.h"')
INCLUDED_SOURCE = re.compile(r'#include\s+"(\w+\.c)"')


# Test files that selected ones need for a function they define:
# test_lsm.c's stack_mprotect(), which iters.c calls.
HELPER_TESTS = ("test_lsm.c",)


def selected_tests(src, selection=TEST_PROGS_SELECTION):
    """The files of prog_tests whose names selection matches, as -t does."""
    return sorted(name for name in os.listdir(os.path.join(src, "prog_tests"))
                  if name.endswith(".c") and (name in HELPER_TESTS or
                                              any(t in name[:-2] for t in selection)))


def needed_programs(src, tests):
    """(BPF program sources, light-skeleton sources) that the tests' skeletons are built from.

    A program may #include another program's source; those come along.
    """
    programs, light = set(), set()
    for test in tests:
        with open(os.path.join(src, "prog_tests", test)) as f:
            for name, kind in SKELETON.findall(f.read()):
                programs.add(f"{name}.c")
                if kind == "lskel":
                    light.add(f"{name}.c")
    todo = list(programs)
    while todo:
        with open(os.path.join(src, "progs", todo.pop())) as f:
            for name in INCLUDED_SOURCE.findall(f.read()):
                if name not in programs and os.path.exists(os.path.join(src, "progs", name)):
                    programs.add(name)
                    todo.append(name)
    return sorted(programs), sorted(light)


def selection_vars(src, out, selection=TEST_PROGS_SELECTION):
    """make variables that build test_progs with only the selected tests and their programs.

    The whole test_progs is about 900 BPF programs and 400 tests (a build
    of it had not finished after 15 min here; this one takes 80 s), and
    6.12.117's bpf_attr_size.c does not build.  test_progs.c finds the
    list as <prog_tests/tests.h> in the output directory, where the
    subsets are.
    """
    tests = selected_tests(src, selection)
    programs, light = needed_programs(src, tests)
    headers = [n for n in os.listdir(os.path.join(src, "progs")) if n.endswith(".h")]
    # A test object's dependency file names the light skeletons it includes
    # as found ("kfunc_call_test.lskel.h"), which make then looks for in the
    # tree on the next build: the explicit prerequisites are enough.
    for name in os.listdir(out):
        if name.endswith(".test.d"):
            os.unlink(os.path.join(out, name))
    # Programs include "../bpf_testmod/bpf_testmod_kfunc.h", "../sdt.h"...:
    # relative to the directory of the link, so those are linked next to it.
    for name in os.listdir(src):
        if name == "bpf_testmod" or name.endswith(".h"):
            link, target = os.path.join(out, name), os.path.join(src, name)
            if not os.path.lexists(link):
                os.symlink(target, link)
    return [f"TRUNNER_TESTS_DIR={link_subset(src, 'prog_tests', out, tests)}",
            f"TRUNNER_BPF_PROGS_DIR={link_subset(src, 'progs', out, programs + headers)}",
            "LINKED_SKELS=", "LSKELS=", f"LSKELS_EXTRA={' '.join(light)}"]


# The selftests' one-line summaries ("  CLNG-BPF [test_progs] x.bpf.o",
# "  GEN-SKEL ...", "  TEST-OBJ ..."): counted for the progress line.
BUILD_STEP = re.compile(r"^  [A-Z][A-Z0-9_-]*(?: \[\S+\])?\s+\S+")


def build_selftests(kernel, selection=TEST_PROGS_SELECTION,
                    targets=("test_verifier", "test_progs")):
    """test_progs with the selected tests (and the other targets) for kernel; its output directory."""
    out = os.path.join(kernel.build, "bpf-selftests-full")
    os.makedirs(out, exist_ok=True)
    src = os.path.join(kernel.source.tree, "tools", "testing", "selftests", "bpf")
    # KDIR: bpf_testmod and the other test modules are built against this
    # kernel's build directory (and with its toolchain, LLVM=-19, which then
    # also builds the user-space programs).  feature-llvm=0: the JIT
    # disassembler is not needed and Debian's llvm-config lists static
    # libraries that are not installed.
    cmd = ["make", "-s", "-C", src, f"-j{(os.cpu_count() or 1) + 1}", f"OUTPUT={out}",
           f"VMLINUX_BTF={kernel.build}/vmlinux", f"KDIR={kernel.build}",
           f"CLANG={BPF_CLANG}", "LLC=llc-19", "LLVM_STRIP=llvm-strip-19", "feature-llvm=0",
           f"KHDR_INCLUDES=-isystem {kernel.build}/usr/include"] + \
        selection_vars(src, out, selection) + \
        [v for v in toolchain_vars() if not v.startswith("CLIPPY")] + \
        [os.path.join(out, t) for t in targets]
    info(f"building {', '.join(targets)} of the BPF selftests for {kernel.build}")
    t0 = time.monotonic()
    log = os.path.join(kernel.build, "bpf-selftests-build.log")
    status, output, steps = stream(cmd, "BPF selftests build", step=BUILD_STEP, quiet=True)
    with open(log, "w") as f:
        f.write(output)
    if status:
        print("".join(output.splitlines(keepends=True)[-60:]))
        raise HarnessError(f"building the BPF selftests failed (log: {log}): {' '.join(cmd)}")
    info(f"built in {time.monotonic() - t0:.0f} s ({steps} steps)")
    return out


def guest_command(out):
    # The upstream build ID tests expect nofault build IDs to come from the
    # page cache only: on our kernel they run with the build ID cache off,
    # as in 'make test'.  The pristine kernel has no switch.
    tests = ",".join(TEST_PROGS_SELECTION)
    return (f"cd {shlex.quote(out)} || exit 1; "
            f"if [ -e {BUILDID_CACHE_SWITCH} ]; then echo 0 > {BUILDID_CACHE_SWITCH}; fi; "
            f"echo buildid-cache=$(cat {BUILDID_CACHE_SWITCH} 2>/dev/null || echo none); "
            "echo '=== test_verifier ==='; ./test_verifier; "
            "echo \"=== end test_verifier status=$? ===\"; "
            f"echo '=== test_progs ==='; ./test_progs -t {tests}; "
            "echo \"=== end test_progs status=$? ===\"; exit 0")


# test_verifier: "#12/u name OK", "#12/p name 2 cases OK", "#12/p name FAIL",
# "... SKIP"; its
# summary "Summary: N PASSED, N SKIPPED, N FAILED".
VERIFIER_RESULT = re.compile(r"^#(\d+/[up]) (.*?) (OK|FAIL|SKIP)\b")
VERIFIER_SUMMARY = re.compile(r"^Summary: (\d+) PASSED, (\d+) SKIPPED, (\d+) FAILED", re.M)
# test_progs: "#12      name:OK", "#12/3    name/sub:FAIL".
PROGS_RESULT = re.compile(r"^#\d+(?:/\d+)?\s+(\S+):(OK|FAIL|SKIP)\b")
PROGS_SUMMARY = re.compile(r"^Summary: (\d+)/(\d+) PASSED, (\d+) SKIPPED, (\d+) FAILED", re.M)
SECTION_END = re.compile(r"^=== end (test_verifier|test_progs) status=(\d+) ===$", re.M)


def parse_results(text):
    """({"test_verifier #N/u name" or "test_progs name": result}, {runner: (status, summary)})."""
    results, runs = {}, {}
    for runner in ("test_verifier", "test_progs"):
        section = marked_section(text, f"=== {runner} ===", SECTION_END, runner)
        if not section:
            continue
        body, status = section
        summary = (VERIFIER_SUMMARY if runner == "test_verifier" else PROGS_SUMMARY).search(body)
        runs[runner] = (status, summary.group(0) if summary else None)
        pattern = VERIFIER_RESULT if runner == "test_verifier" else PROGS_RESULT
        for line in body.splitlines():
            m = pattern.match(line.strip())
            if not m:
                continue
            if runner == "test_verifier":
                # Numbers are stable between the two builds (same tests, same order).
                name = re.sub(r" \d+ cases$", "", m.group(2))
                results[f"test_verifier #{m.group(1)} {name}"] = m.group(3)
            else:
                results[f"test_progs {m.group(1)}"] = m.group(2)
    return results, runs


def compare(tally, ours, pristine):
    """Every test that passes on pristine passes on ours; the other differences are listed."""
    regressions = sorted(t for t, r in pristine.items() if r == "OK" and ours.get(t) != "OK")
    for test in regressions:
        tally.check(False, f"{test}: OK on pristine, {ours.get(test, 'not run')} on ours")
    others = sorted(t for t in set(ours) | set(pristine)
                    if ours.get(t) != pristine.get(t) and t not in regressions)
    for test in others:
        print(f"# difference: {test}: pristine {pristine.get(test, 'not run')}, "
              f"ours {ours.get(test, 'not run')}")
    same = sum(1 for t in pristine if ours.get(t) == pristine[t])
    tally.check(not regressions, f"{same} of {len(pristine)} results the same on both kernels; "
                f"{len(regressions)} regressions, {len(others)} other differences")
    return regressions, others


def run_kernel(tally, name, kernel, out):
    result = boot(guest_command(out), kernel=kernel, cwd="/", timeout=RUN_TIMEOUT, memory="4G",
                  rwdirs=[out])
    text = result.file("guest-output.txt")
    results, runs = parse_results(text)
    for runner in ("test_verifier", "test_progs"):
        status, summary = runs.get(runner, (None, None))
        # A runner that crashed or was cut off has no summary: its missing
        # tests would look like regressions, so say why.
        tally.check(status is not None and summary is not None,
                    f"{name}: {runner} ran to its end (status {status}; {summary or 'no summary'})")
    reasons = result.failures(0)
    for reason in reasons:
        # The pristine kernel's log is upstream's business, but worth seeing.
        if name == "ours":
            tally.check(False, f"{name}: {reason}")
        else:
            info(f"{name}: {reason}")
    info(f"{name}: {len(results)} results, run dir {result.run_dir}")
    return results


def run_bpf_selftests():
    tally = Tally()
    t0 = time.monotonic()
    entries = series.load(REPO)
    added = set(series.kconfig_symbols(entries))
    fragment = selftest_fragment(Source().tree)
    ours_kernel = Kernel(fragment=fragment, flavor="bpf")
    pristine_kernel = Kernel(fragment=fragment, flavor="bpf-pristine")
    pristine_kernel.source = PristineSource()
    # Not every option takes on our allnoconfig base: upstream's may lack a
    # dependency, and theirs can force one of ours (their lockup detectors
    # select the soft lockup detector our benchmark fragment turns off).
    # What matters is that both kernels get the same: listed, not fatal.
    symbols = {sym for sym, _ in parse_fragment(fragment)}
    for kernel in (ours_kernel, pristine_kernel):
        configure_and_build(kernel, tolerate=symbols)
        missed = check_config(fragment, os.path.join(kernel.build, ".config"))
        info(f"{kernel.build}: {len(missed)} options of the merged fragment did not take: "
             + ", ".join(b for b in missed if b.split("=", 1)[0] not in added))
    differ = config_differences(ours_kernel, pristine_kernel, added)
    tally.check(not differ, "the two kernels have the same .config but for the series' options"
                + ("" if not differ else ":\n  " + "\n  ".join(differ)))
    outs = {"ours": build_selftests(ours_kernel), "pristine": build_selftests(pristine_kernel)}
    results = {name: run_kernel(tally, name, kernel, outs[name])
               for name, kernel in (("pristine", pristine_kernel), ("ours", ours_kernel))}
    compare(tally, results["ours"], results["pristine"])
    info(f"bpf-selftests took {(time.monotonic() - t0) / 60:.0f} min")
    return tally.total()

