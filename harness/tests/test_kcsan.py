# SPDX-License-Identifier: GPL-2.0
"""'make test-kcsan's verdict: which KCSAN reports fail the run."""

import unittest

from kharness.kcsan import kcsan_reports, kcsan_watched
from kharness.tally import Tally
from tests.test_verdict import quietly

OURS = """\
[   20.100000] ==================================================================
[   20.100100] BUG: KCSAN: data-race in __buildid_cache_mmap / do_dentry_open
[   20.100200]
[   20.100300] write to 0xffff88800a1b2c3d of 4 bytes by task 81 on cpu 1:
[   20.100400]  do_dentry_open+0x2b1/0x8c0
[   20.100500]  vfs_open+0x5a/0x70
[   20.100600]
[   20.100700] read to 0xffff88800a1b2c3d of 4 bytes by task 80 on cpu 0:
[   20.100800]  __buildid_cache_mmap+0x4e/0x120
[   20.100900]  vm_mmap_pgoff+0xb2/0x1d0
[   20.101000]
[   20.101100] Reported by Kernel Concurrency Sanitizer on:
[   20.101200] CPU: 0 UID: 0 PID: 80 Comm: kunit_try_catch Not tainted 6.12.117 #1
[   20.101300] ==================================================================
"""

UNKNOWN_ORIGIN_IN_RUST = """\
[   21.000000] ==================================================================
[   21.000100] BUG: KCSAN: data-race in _RNvNtNtCs1a2b3c_6kernel7buildid5cache6lookup+0x91/0x2c0
[   21.000200]
[   21.000300] race at unknown origin, with read to 0xffff88800a1b2c40 of 8 bytes by task 80 on cpu 0:
[   21.000400]  _RNvNtNtCs1a2b3c_6kernel7buildid5cache6lookup+0x91/0x2c0
[   21.000500]
[   21.000600] value changed: 0x0000000000000001 -> 0x0000000000000002
[   21.000700] ==================================================================
"""

ELSEWHERE = """\
[   22.000000] ==================================================================
[   22.000100] BUG: KCSAN: data-race in p9_client_cb / p9_client_rpc
[   22.000200]
[   22.000300] write to 0xffff88800b000000 of 4 bytes by interrupt on cpu 1:
[   22.000400]  p9_client_cb+0x1e/0x60
[   22.000500]
[   22.000600] read to 0xffff88800b000000 of 4 bytes by task 1 on cpu 0:
[   22.000700]  p9_client_rpc+0x1a4/0x4d0
[   22.000800] ==================================================================
[   22.000900] buildid_cache: enabled, 4096 entries
"""


class KcsanReports(unittest.TestCase):
    def test_report_in_our_function_is_ours(self):
        [(title, _, ours)] = kcsan_reports(OURS)
        self.assertEqual(title, "BUG: KCSAN: data-race in __buildid_cache_mmap / do_dentry_open")
        self.assertTrue(ours)

    def test_unknown_origin_in_rust_is_ours(self):
        [(_, _, ours)] = kcsan_reports(UNKNOWN_ORIGIN_IN_RUST)
        self.assertTrue(ours)

    def test_report_elsewhere_is_not_ours(self):
        # The build ID line after the report's end does not belong to it.
        [(_, text, ours)] = kcsan_reports(ELSEWHERE)
        self.assertFalse(ours)
        self.assertNotIn("buildid_cache", text)

    def test_every_report_is_found(self):
        reports = kcsan_reports(ELSEWHERE + OURS + UNKNOWN_ORIGIN_IN_RUST)
        self.assertEqual([r[2] for r in reports], [False, True, True])

    def test_clean_log_has_none(self):
        self.assertEqual(kcsan_reports("[    1.0] buildid_cache: enabled\n"), [])


WATCHING = """\
[    0.548000] kcsan: enabled early
[    0.548406] kcsan: strict mode configured
[    0.610000] kcsan: selftest: 3/3 tests passed
"""


class KcsanWatched(unittest.TestCase):
    """A run without a report counts only if KCSAN was on and working."""

    def failures(self, log):
        tally = Tally()
        quietly(kcsan_watched, tally, log)
        return tally.failed

    def test_enabled_and_selftest_passed(self):
        self.assertEqual(self.failures(WATCHING), 0)

    def test_not_enabled_at_boot_fails(self):
        # Recorded from a run whose config lacked CONFIG_KCSAN_EARLY_ENABLE:
        # KCSAN stayed off while the suite ran, and reported nothing.
        self.assertEqual(self.failures("[    0.548406] kcsan: strict mode configured\n"), 2)

    def test_failed_selftest_fails(self):
        log = WATCHING.replace("3/3 tests passed", "2/3 tests passed")
        self.assertEqual(self.failures(log), 1)


if __name__ == "__main__":
    unittest.main()
