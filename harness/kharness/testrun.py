# SPDX-License-Identifier: GPL-2.0
"""Test stages of 'make test' and the 'make run' demo.

Every stage returns a Tally of its checks, or (passed, failed) counts; a
stage that cannot run at all counts as one failure, so a broken stage can
never make the total look green.
"""

import contextlib
import os
import re
import shlex
import subprocess
import sys
import time

from . import tap
from .common import CACHE, CARGO, PYTHON, REPO, HarnessError, Progress, info, run, stream
from .kbuild import Kernel
from .plot import ratio_svg, split_plot_lines
from .vm import boot, run_vm

HARNESS = os.path.join(REPO, "harness")
FUZZ_SECONDS = os.environ.get("FUZZ_SECONDS", "20")
TARGET_DIR = os.path.join(REPO, "target")

CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed")
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests?")
UNITTEST_FAILED = re.compile(r"^FAILED \((.*)\)")


def banner(name):
    print(f"\n===== {name} =====", flush=True)


def cargo_env():
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", TARGET_DIR)
    return env


def stage_host():
    """cargo test over the workspace and the harness' own unit tests."""
    passed = failed = 0
    status, output, _ = stream([CARGO, "test", "--workspace", "--color", "never"],
                               "cargo test", cwd=REPO, env=cargo_env())
    for line in output.splitlines():
        m = CARGO_RESULT.match(line)
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
    if status != 0 and failed == 0:
        failed += 1
    # Differential fuzzing of the parser against the C reference, bounded here
    # ('make fuzz FUZZ_SECONDS=N' runs it longer).
    status, _, _ = stream([CARGO, "run", "-q", "--release", "-p", "buildid-elf", "--bin",
                           "buildid-elf-fuzz", "--", "--seconds", FUZZ_SECONDS],
                          "differential fuzz", cwd=REPO, env=cargo_env())
    ok = status == 0
    print(f"{'ok' if ok else 'not ok'} - differential fuzz, Rust parser vs lib/buildid.c "
          f"({FUZZ_SECONDS} s)")
    passed, failed = passed + ok, failed + (not ok)
    status, output, _ = stream([PYTHON, "-m", "unittest", "discover", "-s", "tests", "-t", "."],
                               "harness unit tests", cwd=HARNESS)
    ran = bad = 0
    for line in output.splitlines():
        m = UNITTEST_RAN.match(line)
        if m:
            ran = int(m.group(1))
        m = UNITTEST_FAILED.match(line)
        if m:
            bad = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", m.group(1)))
    if status != 0 and bad == 0:
        bad = 1
    return passed + ran - min(bad, ran), failed + bad


class Tally:
    """The checks of one stage, each printed as one line; failures keep their reason."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def check(self, ok, what, quiet_ok=False):
        if not ok or not quiet_ok:
            print(f"{'ok' if ok else 'not ok'} - {what}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(what)
        return ok

    def boot(self, boot, what, want_status=0):
        """A VM run: every reason it failed (no status, timeout, each splat) is a failure."""
        reasons = boot.failures(want_status)
        for reason in reasons:
            self.check(False, f"{what}: {reason}")
        if not reasons:
            self.check(True, f"{what}: guest exited {boot.status}, kernel log clean")

    @property
    def counts(self):
        return self.passed, self.failed


EXPECTED_DIR = os.path.join(HARNESS, "expected")


def load_expected(name):
    """{block name: (plan, [project case names])} from harness/expected/NAME.

    Each unindented line is "PLAN NAME" (the case count the block must plan
    and report; "-" for any), each indented line a case of the project that
    must report ok.  The lists are kept by hand, apart from the tests, so
    that a case that disappears from a run, or from the sources, fails.
    """
    expected = {}
    current = None
    with open(os.path.join(EXPECTED_DIR, name)) as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            if raw[0].isspace():
                if current is None:
                    raise HarnessError(f"{name}:{lineno}: case before any block")
                expected[current][1].append(raw.strip())
                continue
            plan, _, block = raw.strip().partition(" ")
            if not block or not (plan == "-" or plan.isdigit()):
                raise HarnessError(f"{name}:{lineno}: want 'PLAN NAME', got {raw.strip()!r}")
            current = block
            expected[current] = (None if plan == "-" else int(plan), [])
    return expected


def check_tap(tally, documents, what, expected, strict_names):
    """Plans, closing results, failures, skips and expected blocks of TAP documents.

    expected is load_expected()'s map; blocks named in strict_names are the
    project's, where a SKIP fails and the plan must equal the expected count.
    """
    for problem in tap.incomplete(documents):
        tally.check(False, f"{what}: {problem}")
    for block in tap.blocks(documents):
        # The project's blocks, what is nested in them, and the results that
        # close them: there every directive (SKIP, XFAIL, TODO, ...) fails.
        in_ours = any(b.name in strict_names for b in block.lineage())
        for result in block.results:
            ours = in_ours or result.name in strict_names
            label = f"{what}: {block.path}/{result.name}".replace("(top level)/", "")
            if not result.ok:
                tally.check(False, f"{label} failed")
            elif result.directive and ours:
                tally.check(False, f"{label} {result.directive} ({result.reason}): "
                            "only a plain ok passes here")
            elif result.skipped:
                print(f"skip - {label} ({result.reason})")
    for name, (plan, cases) in expected.items():
        found = tap.named(documents, name)
        if not tally.check(len(found) == 1, f"{what}: {name} reported once "
                           f"(found {len(found)})", quiet_ok=True):
            continue
        block = found[0]
        if plan is not None:
            tally.check(block.plan == plan, f"{what}: {name} plans {plan} cases "
                        f"(planned {block.plan})", quiet_ok=True)
        # Whether a reported case passed is checked above, with every result.
        results = {r.name: r for r in block.results}
        for case in cases:
            r = results.get(case)
            state = "missing" if r is None else "skipped" if r.skipped else "reported"
            tally.check(state == "reported", f"{what}: {name}/{case} {state}", quiet_ok=True)


def guest_programs():
    """Build the C helpers the guest scripts use; returns their directory."""
    bindir = os.path.join(CACHE, "guest-bin")
    os.makedirs(bindir, exist_ok=True)
    src_dir = os.path.join(HARNESS, "guest")
    for name in sorted(os.listdir(src_dir)):
        if not name.endswith(".c"):
            continue
        src, exe = os.path.join(src_dir, name), os.path.join(bindir, name[:-2])
        if not os.path.exists(exe) or os.stat(exe).st_mtime < os.stat(src).st_mtime:
            run(["gcc", "-O2", "-Wall", "-Werror", "-o", exe, src])
    return bindir


# A guest command that raises a kernel WARNING (the harness stage runs the
# other stages with it, to prove that a splat fails them).
PROVOKE_WARNING = "modprobe lkdtm && echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT"


def with_provoke(command, provoke):
    return f"{{ {provoke}; }} && {{ {command}; }}" if provoke else command


def kunit_verdict(boot, expected=None):
    """The KUnit stage's checks on one boot: the run, every KTAP plan, the expected suites."""
    expected = load_expected("kunit.txt") if expected is None else expected
    tally = Tally()
    tally.boot(boot, "KUnit boot")
    documents = tap.parse_ktap(boot.file("dmesg.txt"))
    cases = [r for b in tap.blocks(documents) if b.depth == 1 for r in b.results]
    check_tap(tally, documents, "KUnit", expected, set(expected) - {"rust_doctests_kernel"})
    passed = sum(1 for r in cases if r.ok and not r.skipped)
    tally.check(passed > 0, f"KUnit: {passed} of {len(cases)} cases passed")
    return tally


def kunit_guest_command():
    """The guest command that loads the buildid_kunit module (harness/guest/kunit.sh)."""
    bindir = guest_programs()
    script = os.path.join(HARNESS, "guest", "kunit.sh")
    return f"BUILDID_GUEST_BIN={shlex.quote(bindir)} sh {shlex.quote(script)}"


def stage_kunit(kernel, provoke=None):
    """Built-in KUnit suites run at boot, then the buildid_kunit module; KTAP from the log."""
    command = kunit_guest_command()
    boot_result = boot(with_provoke(command, provoke), kernel=kernel, cwd="/")
    return kunit_verdict(boot_result)


KSELFTEST_TARGETS = ["proc"]

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


def build_buildid_kselftests(kernel):
    """Build the buildid suite where the guest's make will look for it."""
    run(["make", "-s", "-C", os.path.join(kernel.source.tree, "tools", "testing", "selftests"),
         "TARGETS=buildid", f"O={kernel.build}", f"CLANG={BPF_CLANG}"],
        stdout=subprocess.DEVNULL, progress="building the buildid kselftests")


BPF_CLANG = "clang-19"

# Upstream BPF selftests that exercise the build ID code.  test_progs is
# built with only these tests and the BPF programs they use: the full suite
# needs tools/testing/selftests/bpf/config in the kernel and rebuilds its
# ~900 BPF objects whenever vmlinux changes.
BPF_SELFTESTS = ("build_id", "stacktrace_build_id", "stacktrace_build_id_nmi")
BPF_SELFTEST_PROGS = ("test_build_id.c", "test_stacktrace_build_id.c",
                      "btf_data.c")  # btf_data: resolve_btfids runs on test_progs with it
BPF_SELFTEST_HELPERS = ("urandom_read", "liburandom_read.so", "uprobe_multi")
# The stacktrace_build_id_nmi test needs a hardware PMU, which TCG lacks:
# it may skip, and only when the guest has none.
BPF_SELFTEST_NEED_PMU = {"stacktrace_build_id_nmi"}


def bpf_selftest_subset(kernel, subset):
    """Directories of symlinks to the chosen upstream tests and programs.

    They live in the output directory, which test_progs.c's include path
    has, so that its #include <prog_tests/tests.h> finds the generated list.
    """
    src = os.path.join(kernel.source.tree, "tools", "testing", "selftests", "bpf")
    wanted = {"prog_tests": [f"{t}.c" for t in BPF_SELFTESTS],
              "progs": list(BPF_SELFTEST_PROGS) +
              sorted(f for f in os.listdir(os.path.join(src, "progs")) if f.endswith(".h"))}
    for sub, names in wanted.items():
        d = os.path.join(subset, sub)
        os.makedirs(d, exist_ok=True)
        for name in os.listdir(d):
            if name not in names and name != "tests.h":
                os.unlink(os.path.join(d, name))
        for name in names:
            link, target = os.path.join(d, name), os.path.join(src, sub, name)
            if os.path.islink(link) and os.readlink(link) == target:
                continue
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(target, link)
    return src


def build_bpf_selftests(kernel):
    """Build the upstream test_progs subset; returns its output directory."""
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
    with Progress("building the upstream BPF selftests"):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        print(proc.stdout)
        raise HarnessError(f"building the upstream BPF selftests failed: {' '.join(cmd)}")
    return out


TEST_PROGS_RESULT = re.compile(r"^#(\d+)(?:/(\d+))?\s+(\S+):(OK|FAIL|SKIP)\b")


def test_progs_verdict(tally, text, status, hw_pmu):
    """test_progs exited 0, and each selected test (and every subtest) reported OK.

    Only a test that needs a hardware PMU may skip, and only without one.
    """
    tally.check(status == 0, f"test_progs exited {status}")
    tally.check(BUILDID_CACHE_OFF.search(text) is not None,
                "test_progs did not run with the build ID cache off")
    tops = {}
    for line in text.splitlines():
        m = TEST_PROGS_RESULT.match(line.strip())
        if not m:
            continue
        _, sub, name, result = m.groups()
        test = name.split("/")[0]
        if not sub:
            tops.setdefault(name, []).append(result)
        may_skip = test in BPF_SELFTEST_NEED_PMU and hw_pmu is False
        if result == "SKIP" and may_skip:
            print(f"skip - upstream BPF selftest {name} (no hardware PMU in the guest)")
        elif result == "SKIP":
            why = "it needs no PMU" if test not in BPF_SELFTEST_NEED_PMU else \
                "the guest has a hardware PMU" if hw_pmu else "the guest's PMU is unknown"
            tally.check(False, f"upstream BPF selftest {name} skipped, but {why}")
        else:
            tally.check(result == "OK", f"upstream BPF selftest {name}: {result}")
    for name in BPF_SELFTESTS:
        got = tops.get(name, [])
        tally.check(len(got) == 1, f"upstream BPF selftest {name} reported once "
                    f"({len(got)} results)", quiet_ok=True)
    for name in sorted(set(tops) - set(BPF_SELFTESTS)):
        tally.check(False, f"upstream BPF selftest {name} was not selected")


def build_tool():
    """The user-space buildid tool, as `make run` uses it."""
    run([CARGO, "build", "--release", "-q", "-p", "buildid"], cwd=REPO, env=cargo_env(),
        progress="building the buildid tool")
    return os.path.join(TARGET_DIR, "release", "buildid")


def parse_tool_check(text):
    """Mappings on which show-buildids.sh found the tool and readelf in agreement."""
    passed = len(re.findall(r"\[same\]", text))
    failed = len(re.findall(r"\[DIFFERENT\]", text))
    for line in text.splitlines():
        if "[DIFFERENT]" in line or line.startswith("buildid "):
            print(f"buildid tool check: {line.strip()}")
    return passed, failed


# The parts of the kselftest boot, in order.  Each prints a start mark and,
# if it gets there, an end mark with its status; a part without its end
# mark died or was cut off with the guest.
KSELFTEST_PARTS = ("proc", "buildid", "bpf", "tool")
PART_START = "=== part {} ==="
PART_END = re.compile(r"^=== end (\S+) status=(\d+) ===$", re.M)
HW_PMU = re.compile(r"^hw-pmu=(yes|no)$", re.M)
BUILDID_CACHE_SWITCH = "/proc/sys/kernel/buildid_cache/enabled"
BUILDID_CACHE_OFF = re.compile(r"^buildid-cache=0$", re.M)


def kselftest_part_commands(kernel, install, bpf_out, tool):
    show = os.path.join(HARNESS, "guest", "show-buildids.sh")
    guest_script = os.path.join(HARNESS, "guest", "kselftest-buildid.sh")
    selection = " ".join(f"-t {shlex.quote(t)}" for t in kselftest_list(install))
    return {
        "proc": f"(cd {shlex.quote(install)} && ./run_kselftest.sh {selection})",
        "buildid": f"CLANG={BPF_CLANG} sh {shlex.quote(guest_script)} "
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
        "tool": f"sh {shlex.quote(show)} {shlex.quote(tool)}",
    }


def kselftest_command(commands, parts):
    steps = []
    for part in parts:
        steps.append(f"echo {shlex.quote(PART_START.format(part))}; ({commands[part]}); "
                     f"echo \"=== end {part} status=$? ===\"")
    return "; ".join(steps) + "; exit 0"


def split_parts(text):
    """{part: (its output, its status or None)} of the kselftest boot's output."""
    found = {}
    for part in KSELFTEST_PARTS:
        mark = PART_START.format(part)
        if mark not in text:
            continue
        body = text.split(mark, 1)[1]
        end = PART_END.search(body)
        while end and end.group(1) != part:
            end = PART_END.search(body, end.end())
        if end:
            found[part] = (body[:end.start()], int(end.group(2)))
        else:
            found[part] = (body, None)
    return found


def kselftest_verdict(boot, parts=KSELFTEST_PARTS, proc_selection=None, expected=None):
    """The kselftest stage's checks on one boot of the selected parts."""
    expected = load_expected("kselftest-buildid.txt") if expected is None else expected
    tally = Tally()
    tally.boot(boot, "kselftest boot")
    outputs = split_parts(boot.file("guest-output.txt"))
    for part in parts:
        text, status = outputs.get(part, ("", None))
        state = ("never started" if part not in outputs else
                 "started but never ended" if status is None else "ran to its end")
        if not tally.check(status is not None, f"kselftest part '{part}' {state}",
                           quiet_ok=True):
            continue
        if part in ("proc", "buildid"):
            documents = tap.parse_kselftest(text)
            results = [r for d in documents for r in d.results]
        if part == "proc":
            check_tap(tally, documents, "upstream kselftest", {}, set())
            want = [f"selftests: {t.replace(':', ': ', 1)}" for t in proc_selection or []]
            got = [r.name for r in results]
            tally.check(sorted(got) == sorted(want),
                        f"upstream kselftests reported exactly the {len(want)} selected "
                        f"({len(got)} results" + (f"; missing {sorted(set(want) - set(got))}"
                                                  if set(want) - set(got) else "")
                        + (f"; not selected {sorted(set(got) - set(want))}"
                           if set(got) - set(want) else "") + ")")
            tally.check(status == 0, f"run_kselftest.sh exited {status}")
            ok = sum(1 for r in results if r.ok)
            print(f"upstream kselftests ({', '.join(KSELFTEST_TARGETS)}): {ok} of {len(got)} ok")
        elif part == "buildid":
            check_tap(tally, documents, "buildid kselftest", expected, set(expected))
            got = sorted(r.name for r in results)
            tally.check(got == sorted(expected), f"buildid kselftests: the programs that "
                        f"reported are the expected {len(expected)} ({len(got)} results)")
            tally.check(status == 0, f"buildid kselftests: make run_tests exited {status}")
        elif part == "bpf":
            pmu = HW_PMU.search(text)
            test_progs_verdict(tally, text, status,
                               None if not pmu else pmu.group(1) == "yes")
        elif part == "tool":
            passed, failed = parse_tool_check(text)
            tally.check(failed == 0 and passed > 0,
                        f"buildid tool agrees with readelf -n on {passed} mappings "
                        f"({failed} disagree)")
            tally.check(status == 0, f"show-buildids.sh exited {status}")
    return tally


def stage_kselftest(kernel, parts=KSELFTEST_PARTS, provoke=None):
    kernel.make("headers")
    install = build_kselftests(kernel)
    build_buildid_kselftests(kernel)
    bpf_out = build_bpf_selftests(kernel) if "bpf" in parts else None
    tool = build_tool()
    commands = kselftest_part_commands(kernel, install, bpf_out, tool)
    command = with_provoke(kselftest_command(commands, parts), provoke)
    boot_result = boot(command, kernel=kernel, cwd="/", timeout=1800,
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


def caused_only_by_warning(tally):
    """The stage failed, every failure is a kernel log line, one is lkdtm's WARNING."""
    return (tally.failed > 0
            and all(": kernel log: " in f for f in tally.failures)
            and any("WARNING:" in f and "lkdtm" in f for f in tally.failures))


def splat_with(boot_result, *needles):
    """The run reported status 0 and its splats include a line with every needle."""
    return (boot_result.status == 0 and not boot_result.timed_out and
            any(all(n in line for n in needles) for line in boot_result.splats))


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


def readelf_build_id(path):
    proc = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", proc.stdout)
    return m.group(1) if m else None


# Checkpatch types that do not apply to one file, each with the reason.
CHECKPATCH_EXCEPTIONS = {
    # The exported functions are defined in lib/buildid.c, which this file
    # #includes under other names, so no export can follow its definition.
    "lib/buildid_ref.c": ["EXPORT_SYMBOL"],
}


UNSAFE_USE = re.compile(r"\bunsafe\s*(\{|impl\b)")


def unsafe_without_safety_comment(path):
    """Line numbers of unsafe blocks and impls with no '// SAFETY:' comment above them.

    The comment must be in the comment lines right above the line, or above
    the start of the statement the block is part of (at most 6 lines up).
    """
    with open(path) as f:
        lines = f.read().splitlines()
    bad = []
    for i, line in enumerate(lines):
        code = line.split("//", 1)[0]
        if not UNSAFE_USE.search(code):
            continue
        ok = False
        for j in range(i - 1, max(i - 7, -1), -1):
            text = lines[j].strip()
            if "SAFETY:" in text:
                ok = True
                break
            if UNSAFE_USE.search(text.split("//", 1)[0]) or text.endswith(("}", ";")):
                break
        if not ok:
            bad.append(i + 1)
    return bad


def stage_lint(kernel):
    """rustfmt and checkpatch on the project's kernel files (clippy runs in the build)."""
    from .tree import project_files
    passed = failed = 0
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
    for name in sorted(os.listdir(os.path.join(REPO, "patches"))):
        checks.append((f"checkpatch patches/{name}",
                       ["perl", checkpatch, "--no-tree", "--quiet", "--no-signoff",
                        "--show-types", "--ignore", "FILE_PATH_CHANGES,COMMIT_MESSAGE",
                        os.path.join(REPO, "patches", name)]))
    for f in [f for f in files if f.endswith(".rs")]:
        bad = unsafe_without_safety_comment(os.path.join(REPO, f))
        ok = not bad
        print(f"{'ok' if ok else 'not ok'} - every unsafe block in {f} has a SAFETY comment"
              + ("" if ok else f" (lines {', '.join(map(str, bad))})"))
        passed, failed = passed + ok, failed + (not ok)
    elf = os.path.join(REPO, "rust", "kernel", "buildid", "elf.rs")
    with open(elf) as fh:
        code = "\n".join(line.split("//", 1)[0] for line in fh)
    ok = not re.search(r"\bunsafe\b", code)
    print(f"{'ok' if ok else 'not ok'} - the ELF parser has no unsafe code")
    passed, failed = passed + ok, failed + (not ok)
    for name, cmd in checks:
        proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        ok = proc.returncode == 0 and not proc.stdout.strip()
        print(f"{'ok' if ok else 'not ok'} - {name}")
        if not ok:
            sys.stdout.write(proc.stdout)
        passed, failed = passed + ok, failed + (not ok)
    return passed, failed


STAGES = ["host", "build", "lint", "harness", "kunit", "kselftest"]


def run_tests(stages=None):
    stages = stages or STAGES
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise HarnessError(f"unknown test stage(s): {', '.join(unknown)}; known: {STAGES}")
    total_passed = total_failed = 0
    results = []
    kernel = None
    for name in STAGES:
        if name not in stages:
            continue
        banner(name)
        t0 = time.monotonic()
        try:
            if name == "host":
                # The differential tests compile the tree's own lib/buildid.c.
                os.environ["BUILDID_C_SOURCE"] = Kernel().source.c_reference()
                p, f = stage_host()
            elif name == "build":
                kernel = Kernel()
                kernel.prepare_tree()
                kernel.configure()
                kernel.build_all()
                p, f = 0, 0
            else:
                kernel = kernel or Kernel()
                result = globals()["stage_" + name](kernel)
                p, f = result.counts if isinstance(result, Tally) else result
        except HarnessError as e:
            print(f"error: {e}", file=sys.stderr)
            p, f = 0, 1
            if name == "build":
                results.append((name, p, f, time.monotonic() - t0))
                total_failed += 1
                break
        results.append((name, p, f, time.monotonic() - t0))
        total_passed += p
        total_failed += f
    print()
    for name, p, f, dt in results:
        print(f"  {name:10s} {p:5d} passed {f:4d} failed  ({dt:.0f} s)")
    print(f"{total_passed} passed, {total_failed} failed", flush=True)
    return 0 if total_failed == 0 else 1


BENCH_LARGE_ELF = "/usr/bin/qemu-system-x86_64"
BENCH_DOC = os.path.join(REPO, "BENCHMARKS.md")
BENCH_PLOT = os.path.join(REPO, "BENCHMARKS.svg")


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
    from .kbuild import BENCH_FRAGMENT, FRAGMENT, merge_fragments
    fragment = merge_fragments(FRAGMENT, BENCH_FRAGMENT,
                               os.path.join(CACHE, "build", "bench.config"))
    kernel = Kernel(fragment=fragment, flavor="bench")
    kernel.prepare_tree()
    kernel.configure()
    kernel.build_all()
    kernel.make("headers")
    build_buildid_kselftests(kernel)
    bench = os.path.join(kernel.build, "kselftest", "buildid", "buildid_bench")
    script = os.path.join(HARNESS, "guest", "bench.sh")
    workloads = os.path.join(kernel.source.tree, "tools", "testing", "selftests", "buildid")
    result = boot(f"sh {shlex.quote(script)} {shlex.quote(bench)} {BENCH_LARGE_ELF} "
                  f"{shlex.quote(workloads)}",
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
    with open(BENCH_DOC, "w") as f:
        f.write(BENCH_HEADER.format(
            date=time.strftime("%Y-%m-%d"), machine=machine_description(),
            kernel=kernel.kernel_version(), large=BENCH_LARGE_ELF,
            plot=os.path.basename(BENCH_PLOT)) + tables)
    print(tables)
    info(f"wrote {BENCH_DOC} and {BENCH_PLOT}")
    return 0


BENCH_HEADER = """# Benchmarks

Written by `make bench` on {date}; every ratio comes from one run, with both
sides measured alternately in the same boot, and every row gives the minimum
and the median of its runs, with their number.

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
  kernel and returns the time: the Rust implementation, or the C one of
  `lib/buildid.c` built as `build_id_ref_*()` (`CONFIG_BUILDID_C_REFERENCE`).
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
  inlined, but reaches the folio through out-of-line C helpers (uptodate
  test, size, address, reference drop), where C uses inline functions.
  Evicted data costs a read from the block device either way.

"""


def run_demo():
    kernel = Kernel()
    kernel.prepare_tree()
    kernel.configure()
    kernel.build_all()
    tool = build_tool()
    script = os.path.join(HARNESS, "guest", "show-buildids.sh")
    return run_vm(f"sh {shlex.quote(script)} {shlex.quote(tool)}", kernel=kernel, cwd="/")
