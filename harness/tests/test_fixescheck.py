# SPDX-License-Identifier: GPL-2.0
"""make fixes-check's verdict: each rule with the bad case it exists for."""

import contextlib
import io
import unittest

from kharness import fixescheck, vm
from kharness.bpfselftests import parse_results
from kharness.tally import Tally

SUBTESTS = ("nofault-paged-out", "nofault-paged-in", "sleepable", "frames-vm-end-nofault",
            "frames-vm-end-sleepable", "frames-gap-nofault", "frames-gap-sleepable",
            "frames-note-budget-nofault", "frames-note-budget-sleepable",
            "frames-packet-ring-sleepable", "frames-negative-pos-sleepable",
            "frames-unlocked-read-sleepable")
INVERSION = ("dmesg.txt: [  12.3] WARNING: possible circular locking dependency detected",)


def output(outcomes, summary=True):
    """test_progs -v output: one line per subtest, then the summary."""
    lines = ["=== test_progs ==="]
    lines += [f"#34/{i}    build_id/{name}:{outcomes.get(name, 'OK')}"
              for i, name in enumerate(SUBTESTS, 1)]
    failed = sum(1 for v in outcomes.values() if v == "FAIL")
    if summary:
        lines.append(f"Summary: 1/{len(SUBTESTS) - failed} PASSED, 0 SKIPPED, "
                     f"{1 if failed else 0} FAILED")
    lines.append(f"=== end test_progs status={1 if failed else 0} ===")
    return "\n".join(lines) + "\n"


def run(outcomes=None, splats=(), summary=True, status=0):
    results, runs = parse_results(output(outcomes or {}, summary))
    boot = vm.Boot("/nonexistent", status, False, list(splats))
    return boot, results, runs.get("test_progs", (None, None))


# Without the fixes, every subtest of the fixes series fails; upstream's pass.
PRISTINE = {name: "FAIL" for name in SUBTESTS if name.startswith("frames-")}


def verdict(fixed, pristine):
    tally = Tally()
    with contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        fixescheck.verdict(tally, fixed, pristine)
    return tally


class FixesCheckVerdictTest(unittest.TestCase):
    def test_the_expected_runs_pass(self):
        tally = verdict(run(), run(PRISTINE, INVERSION))
        self.assertEqual(tally.failures, [])

    def test_a_failure_with_the_fixes_fails(self):
        tally = verdict(run({"frames-gap-sleepable": "FAIL"}), run(PRISTINE, INVERSION))
        self.assertEqual(tally.failures, ["with the fixes: test_progs "
                                          "build_id/frames-gap-sleepable FAIL"])

    def test_a_splat_with_the_fixes_fails(self):
        tally = verdict(run(splats=INVERSION), run(PRISTINE, INVERSION))
        self.assertEqual(len(tally.failures), 1)
        self.assertIn("with the fixes: kernel log: dmesg.txt", tally.failures[0])

    def test_a_subtest_that_passes_without_its_fix_fails(self):
        pristine = dict(PRISTINE, **{"frames-note-budget-nofault": "OK"})
        tally = verdict(run(), run(pristine, INVERSION))
        self.assertEqual(tally.failures, ["pristine: test_progs "
                                          "build_id/frames-note-budget-nofault fails without "
                                          "the fixes (OK)"])

    def test_no_lockdep_report_on_pristine_fails(self):
        tally = verdict(run(), run(PRISTINE))
        self.assertEqual(len(tally.failures), 1)
        self.assertIn("pristine: lockdep reports the inversion", tally.failures[0])

    def test_a_run_cut_short_fails(self):
        tally = verdict(run(summary=False), run(PRISTINE, INVERSION))
        self.assertIn("with the fixes: test_progs -a build_id ran to its end "
                      "(status 0; no summary)", tally.failures)
        boot, results, runner = run()
        for name in SUBTESTS[5:]:
            del results[f"test_progs build_id/{name}"]
        tally = verdict((boot, results, runner), run(PRISTINE, INVERSION))
        self.assertIn("with the fixes: the series' 2 subtests ran (of 9)", tally.failures)


if __name__ == "__main__":
    unittest.main()
