# SPDX-License-Identifier: GPL-2.0
"""'make test-kcsan': the build ID cache's KUnit suite under KCSAN.

Not part of 'make test': the KCSAN kernel is a build of its own.  Every
data race report that names a build ID function fails the run; reports
about the rest of the kernel are listed, since the suite cannot fix them.
"""

import os
import re

from .common import CACHE, REPO, info
from .kbuild import FRAGMENT, Kernel, build_kernel, merge_fragments
from .parsers import kunit_verdict, load_expected
from .tally import Tally
from .vm import boot, run_splats, read_logs

KCSAN_FRAGMENT = os.path.join(REPO, "kernel", "configs", "buildid-kcsan.config")
KCSAN_SUITE = "buildid_cache"

TIMESTAMP = re.compile(r"^\[[ \d.]+\]\s?")
# Our C functions (buildid_cache_*, __buildid_*), the C reference's
# (build_id_parse*), and Rust symbols of the buildid_rust crate (lib/buildid/).
OURS = re.compile(r"build_?id", re.IGNORECASE)


def kcsan_reports(log):
    """[(title, text, ours)] of the KCSAN reports in a kernel log.

    A report runs from its "BUG: KCSAN:" line to the "=====" line that
    closes it; it is ours when one of its lines names a build ID function.
    """
    reports = []
    current = None
    for raw in log.splitlines():
        line = TIMESTAMP.sub("", raw)
        if line.startswith("BUG: KCSAN:"):
            current = [line]
            reports.append(current)
        elif current is not None:
            if line.startswith("====="):
                current = None
            else:
                current.append(line)
    return [(r[0], "\n".join(r), any(OURS.search(line) for line in r[1:] + [r[0]]))
            for r in reports]


# KCSAN prints these at boot when it watches from the start, and when its
# self-test (encoding, instrumentation) passed: without them, a run with no
# report proves nothing.
KCSAN_ENABLED = re.compile(r"\bkcsan: enabled early$", re.M)
KCSAN_SELFTEST = re.compile(r"\bkcsan: selftest: (\d+)/(\d+) tests passed$", re.M)


def kcsan_watched(tally, log):
    """KCSAN was on before the suite ran, and its self-test passed."""
    tally.check(bool(KCSAN_ENABLED.search(log)),
                "KCSAN enabled at boot (\"kcsan: enabled early\"), before the suite")
    selftest = KCSAN_SELFTEST.search(log)
    tally.check(bool(selftest) and selftest.group(1) == selftest.group(2),
                f"KCSAN self-test passed ({selftest.group(0) if selftest else 'no result'})")


def kcsan_verdict(boot_result, logs):
    """KCSAN watched; the KUnit suite passed; no KCSAN report of ours, no other splat."""
    expected = {KCSAN_SUITE: load_expected("kunit.txt")[KCSAN_SUITE]}
    tally = kunit_verdict(boot_result, expected=expected)
    log = logs.get("dmesg.txt", "") or logs.get("console.log", "")
    kcsan_watched(tally, log)
    reports = kcsan_reports(log)
    for title, text, ours in reports:
        if ours:
            tally.check(False, f"KCSAN report in build ID code: {title}\n{text}")
        else:
            info(f"KCSAN report outside build ID code (not counted): {title}")
    others = [s for s in run_splats(logs, True, False) if "KCSAN" not in s]
    for splat in others:
        tally.check(False, f"kernel log: {splat}")
    tally.check(True, f"KCSAN: {len(reports)} reports, "
                      f"{sum(1 for r in reports if r[2])} in build ID code")
    return tally


def run_kcsan():
    fragment = merge_fragments(FRAGMENT, KCSAN_FRAGMENT,
                               os.path.join(CACHE, "build", "kcsan.config"))
    kernel = build_kernel(Kernel(fragment=fragment, flavor="kcsan"))
    result = boot("true", kernel=kernel, cwd="/", timeout=1800, check_log=False,
                  append=[f"kunit.filter_glob={KCSAN_SUITE}"])
    tally = kcsan_verdict(result, read_logs(result.run_dir))
    return tally.total()
