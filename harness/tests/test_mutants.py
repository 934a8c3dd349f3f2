# SPDX-License-Identifier: GPL-2.0
"""What 'make mutants' reads from a boot: the cases that failed, by name."""

import os
import unittest

from kharness import mutants
from tests.test_verdict import boot_with, recorded

KSELFTEST = """TAP version 13
1..2
# Starting 2 tests from 1 test cases.
ok 1 dev.file_query
not ok 2 dev.partly_cached_xfs
# FAILED: 1 / 2 tests passed.
"""


class FailedCasesTest(unittest.TestCase):
    def test_kunit_and_kselftest_failures_by_name(self):
        dmesg = recorded("kunit-dmesg.txt").replace(
            "    ok 6 buildid_tmpfs_truncated", "    not ok 6 buildid_tmpfs_truncated").replace(
            "] ok 2 buildid_file", "] not ok 2 buildid_file")
        self.assertEqual(dmesg.count("not ok"), 2)
        # A failure printed before the marker is not the program's.
        output = "not ok 1 dev.partly_cached_ext4\n=== buildid_dev ===\n" + KSELFTEST
        with boot_with(0, files={"dmesg.txt": dmesg, "guest-output.txt": output}) as boot:
            failed, reported = mutants.failed_cases(boot)
        self.assertEqual(failed, {"buildid_file", "buildid_file/buildid_tmpfs_truncated",
                                  "buildid_dev/dev.partly_cached_xfs"})
        self.assertIn("buildid_dev/dev.file_query", reported)
        self.assertIn("buildid_cache/buildid_cache_fill_and_hit", reported)
        self.assertNotIn("buildid_dev/dev.partly_cached_ext4", reported)

    def test_no_kselftest_output_reports_nothing_of_it(self):
        with boot_with(None, files={"dmesg.txt": recorded("kunit-dmesg.txt")}) as boot:
            failed, reported = mutants.failed_cases(boot)
        self.assertEqual(failed, set())
        self.assertFalse(any(r.startswith("buildid_dev/") for r in reported))


class MutantTextTest(unittest.TestCase):
    def test_each_mutant_changes_its_file_once(self):
        for m in mutants.MUTANTS:
            with open(os.path.join(mutants.REPO, m.path)) as f:
                self.assertEqual(f.read().count(m.old), 1, m.name)
            self.assertTrue(m.must_fail, m.name)


class HostMutantTest(unittest.TestCase):
    def test_only_failing_tests_catch_a_mutant(self):
        caught = ("test result: ok. 10 passed; 0 failed; 0 ignored; 0 measured\n"
                  "test result: FAILED. 76 passed; 6 failed; 0 ignored; 0 measured\n"
                  "error: test failed, to rerun pass `-p buildid-elf --test corpus`\n")
        self.assertEqual(mutants.tests_run(caught), (86, 6))
        # A mutant that does not build fails cargo without failing a test.
        broken = ("error[E0425]: cannot find value `offst` in this scope\n"
                  "error: could not compile `buildid-elf` (lib) due to 1 previous error\n")
        self.assertEqual(mutants.tests_run(broken), (0, 0))

    def test_host_mutants_are_mutants_of_host_compiled_files(self):
        host = [m for m in mutants.MUTANTS if m.path in mutants.HOST_COMPILED]
        self.assertGreaterEqual(len(host), 3)
        self.assertTrue(any(m.name == "cross_folio_off_by_one" for m in host))
