# SPDX-License-Identifier: GPL-2.0
"""'make bpf-selftests's verdict: which differences between the kernels fail it."""

import unittest

from kharness.bpfselftests import compare, parse_results
from kharness.tally import Tally
from tests.test_verdict import quietly

# The lines as test_verifier and test_progs print them (test_verifier.c's
# "#%d/%c %s " then "OK", "N cases OK", "FAIL...", "SKIP (...)"; test_progs'
# "#N name:OK" and "#N/M name/sub:FAIL").
PRISTINE = """\
=== test_verifier ===
#0/u BPF_ATOMIC_AND without fetch OK
#0/p BPF_ATOMIC_AND without fetch OK
#1/p bpf_loop callback arg 2 cases OK
#2/u invalid call insn1 FAIL
Unexpected error message!
#3/p perf_event_rdpmc SKIP (unsupported program type 7)
Summary: 3 PASSED, 1 SKIPPED, 1 FAILED
=== end test_verifier status=1 ===
=== test_progs ===
#12/1    find_vma/find_vma_pe:OK
#12/2    find_vma/find_vma_kprobe:OK
#12      find_vma:OK
#40      iters:OK
#41      stacktrace_build_id_nmi:SKIP
Summary: 3/2 PASSED, 1 SKIPPED, 0 FAILED
=== end test_progs status=0 ===
"""


def ours_with(*changes):
    text = PRISTINE
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    return text


class ParseTest(unittest.TestCase):
    def test_results_of_both_runners(self):
        results, runs = parse_results(PRISTINE)
        self.assertEqual(results["test_verifier #0/u BPF_ATOMIC_AND without fetch"], "OK")
        # "2 cases OK" is the same test as "OK": its name has no count.
        self.assertEqual(results["test_verifier #1/p bpf_loop callback arg"], "OK")
        self.assertEqual(results["test_verifier #2/u invalid call insn1"], "FAIL")
        self.assertEqual(results["test_verifier #3/p perf_event_rdpmc"], "SKIP")
        self.assertEqual(results["test_progs find_vma/find_vma_kprobe"], "OK")
        self.assertEqual(results["test_progs stacktrace_build_id_nmi"], "SKIP")
        self.assertEqual(runs["test_verifier"], (1, "Summary: 3 PASSED, 1 SKIPPED, 1 FAILED"))
        self.assertEqual(runs["test_progs"][0], 0)

    def test_a_runner_cut_off_has_no_status(self):
        text = PRISTINE.split("#40")[0]
        _, runs = parse_results(text)
        self.assertEqual(runs["test_progs"], (None, None))


class CompareTest(unittest.TestCase):
    def verdict(self, ours_text):
        tally = Tally()
        regressions, others = quietly(compare, tally, parse_results(ours_text)[0],
                                      parse_results(PRISTINE)[0])
        return tally, regressions, others

    def test_same_results_pass(self):
        tally, regressions, others = self.verdict(PRISTINE)
        self.assertEqual((tally.failed, regressions, others), (0, [], []))

    def test_a_test_that_fails_only_on_ours_fails(self):
        tally, regressions, _ = self.verdict(ours_with(
            ("#12/2    find_vma/find_vma_kprobe:OK", "#12/2    find_vma/find_vma_kprobe:FAIL")))
        self.assertEqual(regressions, ["test_progs find_vma/find_vma_kprobe"])
        self.assertEqual(tally.failed, 2)

    def test_a_test_that_skips_only_on_ours_fails(self):
        _, regressions, _ = self.verdict(ours_with(
            ("#40      iters:OK", "#40      iters:SKIP")))
        self.assertEqual(regressions, ["test_progs iters"])

    def test_a_test_missing_on_ours_fails(self):
        _, regressions, _ = self.verdict(ours_with(
            ("#0/p BPF_ATOMIC_AND without fetch OK\n", "")))
        self.assertEqual(regressions, ["test_verifier #0/p BPF_ATOMIC_AND without fetch"])

    def test_a_fix_on_ours_is_listed_not_failed(self):
        tally, regressions, others = self.verdict(ours_with(
            ("#2/u invalid call insn1 FAIL", "#2/u invalid call insn1 OK")))
        self.assertEqual((tally.failed, regressions), (0, []))
        self.assertEqual(others, ["test_verifier #2/u invalid call insn1"])


class LinkSubsetTest(unittest.TestCase):
    """The generated test list goes when the subset changes, and only then."""

    def test_list_regenerated_when_a_test_is_added(self):
        import os
        import tempfile
        from kharness.stages import link_subset

        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "src"), os.path.join(tmp, "out")
            os.makedirs(os.path.join(src, "prog_tests"))
            for name in ("a.c", "b.c"):
                open(os.path.join(src, "prog_tests", name), "w").close()
            tests_h = os.path.join(out, "prog_tests", "tests.h")

            link_subset(src, "prog_tests", out, ["a.c"])
            open(tests_h, "w").close()
            link_subset(src, "prog_tests", out, ["a.c"])
            self.assertTrue(os.path.exists(tests_h), "an unchanged subset kept its list")
            link_subset(src, "prog_tests", out, ["a.c", "b.c"])
            self.assertFalse(os.path.exists(tests_h), "a stale list of tests was kept")
            self.assertEqual(sorted(os.listdir(os.path.dirname(tests_h))), ["a.c", "b.c"])

    def test_written_runner_kept_until_it_changes(self):
        import os
        import tempfile
        from kharness.stages import link_subset

        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "src"), os.path.join(tmp, "out")
            os.makedirs(os.path.join(src, "prog_tests"))
            open(os.path.join(src, "prog_tests", "a.c"), "w").close()
            d = os.path.join(out, "prog_tests")
            tests_h = os.path.join(d, "tests.h")

            link_subset(src, "prog_tests", out, ["a.c"], {"r.c": "one"})
            with open(os.path.join(d, "r.c")) as f:
                self.assertEqual(f.read(), "one")
            self.assertFalse(os.path.islink(os.path.join(d, "r.c")))
            open(tests_h, "w").close()
            link_subset(src, "prog_tests", out, ["a.c"], {"r.c": "one"})
            self.assertTrue(os.path.exists(tests_h), "an unchanged runner dropped the list")
            link_subset(src, "prog_tests", out, ["a.c"], {"r.c": "two"})
            self.assertFalse(os.path.exists(tests_h), "a changed runner kept a stale list")
            with open(os.path.join(d, "r.c")) as f:
                self.assertEqual(f.read(), "two")
            link_subset(src, "prog_tests", out, ["a.c"])
            self.assertEqual(os.listdir(d), ["a.c"], "a runner no longer wanted was kept")


if __name__ == "__main__":
    unittest.main()
