# SPDX-License-Identifier: GPL-2.0
"""What the test stages read from the programs they run, and their verdicts.

Nothing here builds or boots anything: each function takes the output of a
run (a text, or a vm.Boot) and counts or checks what it shows, so that the
unit tests can run every rule on recorded outputs.
"""

import os
import re

from . import tap
from .common import HARNESS, HarnessError
from .tally import Tally

CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed")
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests?")
UNITTEST_FAILED = re.compile(r"^FAILED \((.*)\)")


def cargo_counts(output, status):
    """(passed, failed) of 'cargo test'; a failing run that reports no failure fails once."""
    passed = failed = 0
    for line in output.splitlines():
        m = CARGO_RESULT.match(line)
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
    if status != 0 and failed == 0:
        failed += 1
    return passed, failed


# The functions of <linux/buildid.h> that the kernel's callers reach.
BUILDID_EXPORTS = ("build_id_parse", "build_id_parse_nofault", "build_id_parse_file",
                   "build_id_parse_buf")
RUST_BUILDID_OBJECT = "lib/buildid/buildid_rust.o"
NM_ARCHIVE_SYMBOL = re.compile(r"^[^:]+:([^:]+):[0-9a-f]* *([A-Za-z]) (\S+)$")


def buildid_providers(nm_output):
    """{function: [objects]} defining the BUILDID_EXPORTS, from 'nm -A vmlinux.a'."""
    providers = {name: [] for name in BUILDID_EXPORTS}
    for line in nm_output.splitlines():
        m = NM_ARCHIVE_SYMBOL.match(line.strip())
        if m and m.group(2) == "T" and m.group(3) in providers:
            providers[m.group(3)].append(m.group(1))
    return providers


def rust_serves_verdict(providers):
    """(ok, text): every export is defined once, by the Rust lib/buildid."""
    wrong = [f"{name}: {', '.join(objs) or 'not defined'}"
             for name, objs in sorted(providers.items()) if objs != [RUST_BUILDID_OBJECT]]
    if wrong:
        return False, ("the kernel under test does not serve <linux/buildid.h> from "
                       f"{RUST_BUILDID_OBJECT} ({'; '.join(wrong)})")
    return True, f"the kernel under test serves <linux/buildid.h> from {RUST_BUILDID_OBJECT}"


def unittest_counts(output, status):
    """(passed, failed) of 'python -m unittest'; a failing run that reports none fails once."""
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
    return ran - min(bad, ran), bad


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


# The upstream kselftest collections the kselftest stage runs.
KSELFTEST_TARGETS = ["proc"]

# The BPF selftests (test_progs) that exercise the build ID code: upstream's,
# and the series' verifier_vma_build_id and vma_build_id (selftests/bpf,
# bpf-next series).
BPF_SELFTESTS = ("build_id", "stacktrace_build_id", "stacktrace_build_id_nmi",
                 "verifier_vma_build_id", "vma_build_id")
# The stacktrace_build_id_nmi test needs a hardware PMU, which TCG lacks:
# it may skip, and only when the guest has none.
BPF_SELFTEST_NEED_PMU = {"stacktrace_build_id_nmi"}

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
            print(f"skip - BPF selftest {name} (no hardware PMU in the guest)")
        elif result == "SKIP":
            why = "it needs no PMU" if test not in BPF_SELFTEST_NEED_PMU else \
                "the guest has a hardware PMU" if hw_pmu else "the guest's PMU is unknown"
            tally.check(False, f"BPF selftest {name} skipped, but {why}")
        else:
            tally.check(result == "OK", f"BPF selftest {name}: {result}")
    for name in BPF_SELFTESTS:
        got = tops.get(name, [])
        tally.check(len(got) == 1, f"BPF selftest {name} reported once "
                    f"({len(got)} results)", quiet_ok=True)
    for name in sorted(set(tops) - set(BPF_SELFTESTS)):
        tally.check(False, f"BPF selftest {name} was not selected")


def parse_tool_check(text):
    """Mappings on which show-buildids.sh and record-exits.sh found the tool and readelf
    in agreement."""
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
BUILDID_CACHE_OFF = re.compile(r"^buildid-cache=0$", re.M)


def marked_section(text, start, end_re, name):
    """(the text after start up to end_re's match named name, that match's status).

    end_re's groups are the name and the status; a section that never ended
    runs to the end of text, with status None.  None if start is not in text.
    """
    if start not in text:
        return None
    body = text.split(start, 1)[1]
    end = end_re.search(body)
    while end and end.group(1) != name:
        end = end_re.search(body, end.end())
    if not end:
        return body, None
    return body[:end.start()], int(end.group(2))


def split_parts(text):
    """{part: (its output, its status or None)} of the kselftest boot's output."""
    found = {}
    for part in KSELFTEST_PARTS:
        section = marked_section(text, PART_START.format(part), PART_END, part)
        if section:
            found[part] = section
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
            tally.check(status == 0, f"show-buildids.sh and record-exits.sh exited {status}")
    return tally


def caused_only_by_warning(tally):
    """The stage failed, every failure is a kernel log line, one is lkdtm's WARNING."""
    return (tally.failed > 0
            and all(": kernel log: " in f for f in tally.failures)
            and any("WARNING:" in f and "lkdtm" in f for f in tally.failures))


def splat_with(boot_result, *needles):
    """The run reported status 0 and its splats include a line with every needle."""
    return (boot_result.status == 0 and not boot_result.timed_out and
            any(all(n in line for n in needles) for line in boot_result.splats))
