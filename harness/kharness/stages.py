# SPDX-License-Identifier: GPL-2.0
"""Test stages of 'make test' and the 'make run' demo.

Every stage returns a Tally of its checks; a stage that cannot run at all
counts as one failure, so a broken stage can never make the total look
green.  What the stages read from their runs, and their verdicts, are in
parsers.py; the lint stage is lint.py; the guest programs and cargo
environment that 'make mutants' and 'make bench' share are in guest.py.
"""

import contextlib
import os
import re
import shlex
import subprocess
import sys
import time

from .common import CARGO, HARNESS, PYTHON, REPO, HarnessError, Progress, run, stream
from .guest import (BPF_CLANG, build_buildid_kselftests, build_tool, cargo_env, fuzz_command,
                    kunit_guest_command, private_copies)
from .kbuild import Kernel, build_kernel
from .lint import stage_lint
from .mutants import host_mutant_checks
from .parsers import (BPF_SELFTESTS, KSELFTEST_PARTS, KSELFTEST_TARGETS, PART_START,
                      buildid_providers, caused_only_by_warning, cargo_counts,
                      kselftest_verdict, kunit_verdict, rust_serves_verdict, splat_with,
                      unittest_counts)
from .tally import Tally, banner
from .vm import boot, run_vm

FUZZ_SECONDS = os.environ.get("FUZZ_SECONDS", "20")


def stage_host(c_source):
    """cargo test over the workspace and the harness' own unit tests.

    c_source is the lib/buildid.c the differential tests compile.
    """
    tally = Tally()
    status, output, _ = stream([CARGO, "test", "--workspace", "--color", "never"],
                               "cargo test", cwd=REPO, env=cargo_env(c_source))
    tally.add(*cargo_counts(output, status))
    # Differential fuzzing of the parser against the C reference, bounded here
    # ('make fuzz FUZZ_SECONDS=N' runs it longer).
    status, _, _ = stream(fuzz_command(FUZZ_SECONDS, quiet=True),
                          "differential fuzz", cwd=REPO, env=cargo_env(c_source))
    tally.check(status == 0, f"differential fuzz, Rust parser vs lib/buildid.c "
                f"({FUZZ_SECONDS} s)")
    status, output, _ = stream([PYTHON, "-m", "unittest", "discover", "-s", "tests", "-t", "."],
                               "harness unit tests", cwd=HARNESS)
    tally.add(*unittest_counts(output, status))
    # The host tests must catch broken readers.
    host_mutant_checks(tally, c_source)
    return tally


# A guest command that raises a kernel WARNING (the harness stage runs the
# other stages with it, to prove that a splat fails them).
PROVOKE_WARNING = "modprobe lkdtm && echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT"


def with_provoke(command, provoke):
    return f"{{ {provoke}; }} && {{ {command}; }}" if provoke else command


def stage_kunit(kernel, provoke=None):
    """Built-in KUnit suites run at boot, then the buildid_kunit module; KTAP from the log."""
    command = kunit_guest_command()
    boot_result = boot(with_provoke(command, provoke), kernel=kernel, cwd="/")
    return kunit_verdict(boot_result)


# Upstream kselftests left out, each with the reason.
KSELFTEST_EXCLUDED = {
    # Walks all of /proc and asserts that no readdir fails; run after the
    # other proc tests in the VM it hits /proc/<pid> directories of tasks
    # that exit under it (passes alone, fails in the full run).
    "proc:read",
}


def kselftest_list(install):
    """COLLECTION:TEST names of the installed kselftests minus the excluded ones."""
    with open(os.path.join(install, "kselftest-list.txt")) as f:
        tests = [line.strip() for line in f if line.strip()]
    return [t for t in tests if t not in KSELFTEST_EXCLUDED]


def build_kselftests(kernel):
    out = os.path.join(kernel.build, "kselftest")
    install = os.path.join(out, "install")
    run(["make", "-s", "-C", os.path.join(kernel.source.tree, "tools", "testing", "selftests"),
         f"O={out}", f"KHDR_INCLUDES=-isystem {kernel.build}/usr/include",
         "TARGETS=" + " ".join(KSELFTEST_TARGETS), f"INSTALL_PATH={install}", "install"],
        stdout=subprocess.DEVNULL, progress="building the upstream kselftests")
    return install


# test_progs is built with only the BPF selftests that exercise the build
# ID code (parsers.BPF_SELFTESTS) and the BPF programs they use: the full
# suite needs tools/testing/selftests/bpf/config in the kernel and rebuilds
# its ~900 BPF objects whenever vmlinux changes.
BPF_SELFTEST_PROGS = ("test_build_id.c", "test_stacktrace_build_id.c",
                      "verifier_vma_build_id.c", "vma_build_id.c",
                      "btf_data.c")  # btf_data: resolve_btfids runs on test_progs with it
BPF_SELFTEST_HELPERS = ("urandom_read", "liburandom_read.so", "uprobe_multi")

# prog_tests/verifier.c runs every verifier_*.c program, so it would need all
# of their skeletons: the subset has a runner of its own for the one it needs,
# which does what verifier.c's RUN() does (without CAP_SYS_ADMIN, as
# test_verifier runs).
BPF_SELFTEST_RUNNERS = {
    "verifier_vma_build_id.c": """\
// Written by the project's harness: prog_tests/verifier.c's RUN() for one test.
#include <test_progs.h>
#include "cap_helpers.h"
#include "verifier_vma_build_id.skel.h"

void test_verifier_vma_build_id(void)
{
	struct test_loader tester = {};
	__u64 old_caps;

	if (!ASSERT_OK(cap_disable_effective(1ULL << CAP_SYS_ADMIN, &old_caps),
		       "drop CAP_SYS_ADMIN"))
		return;
	test_loader__run_subtests(&tester, "verifier_vma_build_id",
				  verifier_vma_build_id__elf_bytes);
	test_loader_fini(&tester);
	ASSERT_OK(cap_enable_effective(old_caps, NULL), "restore CAP_SYS_ADMIN");
}
""",
}


def link_subset(src, sub, out, names, written=None):
    """out/sub: links to src/sub's names, the files of written ({name: text}),
    and nothing else but a generated tests.h.

    The selftests' Makefile regenerates tests.h only when a test is newer
    than it, so a test added to the subset since the last build would not be
    in the list: the list goes whenever the links change.
    """
    written = written or {}
    d = os.path.join(out, sub)
    os.makedirs(d, exist_ok=True)
    changed = False
    for name in os.listdir(d):
        if name not in names and name not in written and name != "tests.h":
            os.unlink(os.path.join(d, name))
            changed = True
    for name in names:
        link, target = os.path.join(d, name), os.path.join(src, sub, name)
        if not (os.path.islink(link) and os.readlink(link) == target):
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(target, link)
            changed = True
    for name, text in written.items():
        path = os.path.join(d, name)
        if not os.path.islink(path) and os.path.isfile(path):
            with open(path) as f:
                if f.read() == text:
                    continue
        if os.path.lexists(path):
            os.unlink(path)
        with open(path, "w") as f:
            f.write(text)
        changed = True
    if changed and os.path.exists(os.path.join(d, "tests.h")):
        os.unlink(os.path.join(d, "tests.h"))
    # The objects are compiled as $(CURDIR)/<dir>/x.c: the make variables
    # name the directories relative to src.
    return os.path.relpath(d, src)


def bpf_selftest_subset(kernel, subset):
    """Directories of symlinks to the chosen tests and programs, and the written runners.

    They live in the output directory, which test_progs.c's include path
    has, so that its #include <prog_tests/tests.h> finds the generated list.
    """
    src = os.path.join(kernel.source.tree, "tools", "testing", "selftests", "bpf")
    wanted = {"prog_tests": [f"{t}.c" for t in BPF_SELFTESTS
                             if f"{t}.c" not in BPF_SELFTEST_RUNNERS],
              "progs": list(BPF_SELFTEST_PROGS) +
              sorted(f for f in os.listdir(os.path.join(src, "progs")) if f.endswith(".h"))}
    for sub, names in wanted.items():
        link_subset(src, sub, subset, names,
                    BPF_SELFTEST_RUNNERS if sub == "prog_tests" else None)
    return src


def build_bpf_selftests(kernel):
    """Build the test_progs subset (parsers.BPF_SELFTESTS); returns its output directory."""
    out = os.path.join(kernel.build, "bpf-selftests")
    src = bpf_selftest_subset(kernel, out)
    # The test objects are compiled as $(CURDIR)/<tests dir>/x.c, so the
    # subset directories are given relative to the selftests directory.
    rel = os.path.relpath(out, src)
    helpers = " ".join(os.path.join(out, h) for h in BPF_SELFTEST_HELPERS)
    # The other runners (test_maps, ...) share the overridden directories,
    # so make warns about duplicate recipes: the output is shown on failure.
    # feature-llvm=0: the JIT disassembler is not needed and Debian's
    # llvm-config lists static libraries that are not installed.
    cmd = ["make", "-s", "-C", src, f"OUTPUT={out}", f"VMLINUX_BTF={kernel.build}/vmlinux",
           f"TRUNNER_TESTS_DIR={rel}/prog_tests", f"TRUNNER_BPF_PROGS_DIR={rel}/progs",
           "LINKED_SKELS=", "LSKELS=", "LSKELS_EXTRA=", f"TRUNNER_EXTRA_FILES={helpers}",
           f"CLANG={BPF_CLANG}", "LLC=llc-19", "LLVM_STRIP=llvm-strip-19", "feature-llvm=0",
           f"KHDR_INCLUDES=-isystem {kernel.build}/usr/include",
           os.path.join(out, "test_progs")] + [os.path.join(out, h) for h in BPF_SELFTEST_HELPERS]
    with Progress("building the BPF selftests (test_progs subset)"):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        print(proc.stdout)
        raise HarnessError("building the BPF selftests (test_progs subset) failed: "
                           f"{' '.join(cmd)}")
    return out


BUILDID_CACHE_SWITCH = "/proc/sys/kernel/buildid_cache/enabled"


def kselftest_part_commands(kernel, install, bpf_out, tool):
    # The tool checks run as a user who cloned into root's home would run
    # them: from below a directory that only root may search.
    tool, show, record = private_copies(
        [tool] + [os.path.join(HARNESS, "guest", name)
                  for name in ("show-buildids.sh", "record-exits.sh")],
        os.path.join(kernel.build, "kselftest"))
    guest_script = os.path.join(HARNESS, "guest", "kselftest-buildid.sh")
    selection = " ".join(f"-t {shlex.quote(t)}" for t in kselftest_list(install))
    return {
        "proc": f"(cd {shlex.quote(install)} && ./run_kselftest.sh {selection})",
        "buildid": f"CLANG={BPF_CLANG} BUILDID_TOOL={shlex.quote(tool)} sh {shlex.quote(guest_script)} "
                   f"{shlex.quote(kernel.source.tree)} {shlex.quote(kernel.build)}",
        # The x86 core PMU registers as "cpu"; without it (TCG) only
        # software events exist.
        # Upstream's build_id tests expect the page cache to be the only
        # source of nofault build IDs: they run with the build ID cache off.
        "bpf": "if [ -e /sys/bus/event_source/devices/cpu ]; then echo hw-pmu=yes; "
               "else echo hw-pmu=no; fi; "
               f"echo 0 > {BUILDID_CACHE_SWITCH} && "
               f"echo buildid-cache=$(cat {BUILDID_CACHE_SWITCH}) && "
               f"cd {shlex.quote(bpf_out)} && ./test_progs -t {','.join(BPF_SELFTESTS)}; "
               f"s=$?; echo 1 > {BUILDID_CACHE_SWITCH}; exit $s",
        "tool": f"sh {shlex.quote(show)} {shlex.quote(tool)}; s=$?; "
                f"sh {shlex.quote(record)} {shlex.quote(tool)} || s=1; exit $s",
    }


def kselftest_command(commands, parts):
    steps = []
    for part in parts:
        steps.append(f"echo {shlex.quote(PART_START.format(part))}; ({commands[part]}); "
                     f"echo \"=== end {part} status=$? ===\"")
    return "; ".join(steps) + "; exit 0"


def stage_kselftest(kernel, parts=KSELFTEST_PARTS, provoke=None):
    build_buildid_kselftests(kernel)
    install = build_kselftests(kernel)
    bpf_out = build_bpf_selftests(kernel) if "bpf" in parts else None
    tool = build_tool()
    commands = kselftest_part_commands(kernel, install, bpf_out, tool)
    command = with_provoke(kselftest_command(commands, parts), provoke)
    # About 30 min under TCG on the machines CI runs on; at most 45.
    boot_result = boot(command, kernel=kernel, cwd="/", timeout=2700,
                       rwdirs=[os.path.join(kernel.build, "kselftest")])
    return kselftest_verdict(boot_result, parts, kselftest_list(install))


class Commented:
    """A stdout whose lines come out as "# " comments: a nested stage's output.

    The harness stage runs other stages expecting them to fail; their
    "not ok" lines are part of what it checks, not results of its own.
    """

    def __init__(self, out):
        self.out = out
        self.at_line_start = True
        self.buffer = self

    def write(self, text):
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        for piece in text.splitlines(keepends=True):
            if self.at_line_start:
                self.out.write("#   ")
            self.out.write(piece)
            self.at_line_start = piece.endswith("\n")
        return len(text)

    def flush(self):
        self.out.flush()


def nested_stage(stage, kernel, **kwargs):
    with contextlib.redirect_stdout(Commented(sys.stdout)):
        return stage(kernel, **kwargs)


def stage_harness(kernel):
    """The VM runner carries the guest's status, and every splat fails a run and a stage."""
    tally = Tally()
    result = boot("echo exiting 3; exit 3", kernel=kernel, cwd="/", quiet=True)
    tally.check(result.status == 3 and not result.splats,
                f"guest exit status 3 comes back as 3 (got {result.status})")

    # Each provoked problem must be seen in the log for what it is: a run
    # that timed out, or whose modprobe failed, does not pass.
    result = boot(PROVOKE_WARNING, kernel=kernel, cwd="/", quiet=True)
    tally.check(splat_with(result, "WARNING:", "lkdtm") and result.failures(),
                f"lkdtm's WARNING fails the run, seen in the kernel log "
                f"(status {result.status}, {len(result.splats)} splat lines)")
    # With CONFIG_STACKTRACE_BUILD_ID the WARNING's stack dump shows the build
    # IDs the kernel computed at boot (init_vmlinux_build_id) and at module
    # load (build_id_parse_buf); both must be what readelf finds in the files.
    log = result.file("dmesg.txt")
    for what, pattern, path in [
        ("vmlinux_build_id", r"CPU: \d+ UID: \d+ PID: .* ([0-9a-f]{40})$",
         os.path.join(kernel.build, "vmlinux")),
        ("lkdtm.ko build ID", r"\[lkdtm ([0-9a-f]{2,40})\]$",
         os.path.join(kernel.build, "drivers", "misc", "lkdtm", "lkdtm.ko")),
    ]:
        shown = [m.group(1) for m in (re.search(pattern, line.rstrip())
                                      for line in log.splitlines()) if m]
        want = readelf_build_id(path)
        ok = bool(shown) and want is not None and all(x == want for x in shown)
        tally.check(ok, f"{what} in the stack dump matches readelf -n "
                    f"({shown[0] if shown else 'not shown'} vs {want})")

    result = boot("modprobe lkdtm && echo ARRAY_BOUNDS > /sys/kernel/debug/provoke-crash/DIRECT",
                  kernel=kernel, cwd="/", quiet=True)
    tally.check(splat_with(result, "UBSAN: array-index-out-of-bounds") and result.failures(),
                f"a UBSAN report fails the run (status {result.status}, "
                f"{len(result.splats)} splat lines)")

    result = boot("modprobe kmemleak-test", kernel=kernel, cwd="/", quiet=True)
    tally.check(splat_with(result, "kmemleak.txt:", "unreferenced object") and result.failures(),
                f"kmemleak's unreferenced objects fail the run (status {result.status}, "
                f"{len(result.splats)} splat lines)")

    # The stages themselves: the same WARNING in their boot fails them, and
    # nothing else does.
    print("# the KUnit stage, with a WARNING raised in its boot:")
    kunit = nested_stage(stage_kunit, kernel, provoke=PROVOKE_WARNING)
    tally.check(caused_only_by_warning(kunit),
                f"a WARNING in the KUnit boot fails the KUnit stage, and only it "
                f"({kunit.failed} failures)")
    print("# the kselftest stage (its tool part), with a WARNING raised in its boot:")
    kselftest = nested_stage(stage_kselftest, kernel, parts=("tool",), provoke=PROVOKE_WARNING)
    tally.check(caused_only_by_warning(kselftest),
                f"a WARNING in the kselftest boot fails the kselftest stage, and only it "
                f"({kselftest.failed} failures)")
    return tally


def stage_build():
    """The test kernel, built; it must be the Rust lib/buildid that the stages test.

    The kselftests test behaviour, not which implementation answers (they
    are upstream's too): which one the kernel links is checked here, on its
    objects.
    """
    kernel = build_kernel()
    tally = Tally()
    nm = subprocess.run(["nm", "-A", "vmlinux.a"], cwd=kernel.build, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True)
    if nm.returncode != 0:
        tally.check(False, f"nm -A vmlinux.a exited {nm.returncode}: cannot tell which "
                    "lib/buildid the kernel links")
        return kernel, tally
    tally.check(*rust_serves_verdict(buildid_providers(nm.stdout)))
    return kernel, tally


def readelf_build_id(path):
    proc = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", proc.stdout)
    return m.group(1) if m else None


STAGES = ["host", "build", "lint", "harness", "kunit", "kselftest"]

# The stages after the build: each takes the built kernel, returns a Tally.
KERNEL_STAGES = {"lint": stage_lint, "harness": stage_harness, "kunit": stage_kunit,
                 "kselftest": stage_kselftest}


def run_stage(name, kernel):
    """(kernel, Tally) of one stage; the build stage builds the kernel the others use."""
    if name == "host":
        # The differential tests compile the tree's own lib/buildid.c.
        return kernel, stage_host(Kernel().source.c_reference())
    if name == "build":
        return stage_build()
    kernel = kernel or Kernel()
    return kernel, KERNEL_STAGES[name](kernel)


def run_tests(stages=None):
    stages = stages or STAGES
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise HarnessError(f"unknown test stage(s): {', '.join(unknown)}; known: {STAGES}")
    total = Tally()
    results = []
    kernel = None
    for name in STAGES:
        if name not in stages:
            continue
        banner(name)
        t0 = time.monotonic()
        try:
            kernel, tally = run_stage(name, kernel)
        except HarnessError as e:
            print(f"error: {e}", file=sys.stderr)
            tally = Tally()
            tally.add(0, 1)
        results.append((name, *tally.counts, time.monotonic() - t0))
        total.add(*tally.counts)
        if name == "build" and tally.failed:
            break
    print()
    for name, p, f, dt in results:
        print(f"  {name:10s} {p:5d} passed {f:4d} failed  ({dt:.0f} s)")
    return total.total()


def run_demo():
    kernel = build_kernel()
    tool = build_tool()
    script = os.path.join(HARNESS, "guest", "show-buildids.sh")
    return run_vm(f"sh {shlex.quote(script)} {shlex.quote(tool)}", kernel=kernel, cwd="/")
