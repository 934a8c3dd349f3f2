# SPDX-License-Identifier: GPL-2.0
"""Config check, kernel log scan and KTAP/TAP counting."""

import os
import tempfile
import unittest

from kharness import kbuild, testrun, vm

FRAGMENT = """# comment
CONFIG_A=y
CONFIG_B=m
# CONFIG_C is not set
CONFIG_D=n
CONFIG_E="str"
"""


class ConfigCheckTest(unittest.TestCase):
    def check(self, config):
        with tempfile.TemporaryDirectory() as d:
            frag, cfg = os.path.join(d, "frag"), os.path.join(d, "cfg")
            with open(frag, "w") as f:
                f.write(FRAGMENT)
            with open(cfg, "w") as f:
                f.write(config)
            return kbuild.check_config(frag, cfg)

    def test_all_taken(self):
        self.assertEqual(self.check('CONFIG_A=y\nCONFIG_B=m\nCONFIG_E="str"\n'), [])

    def test_names_options_that_did_not_take(self):
        bad = self.check('CONFIG_B=y\nCONFIG_C=y\nCONFIG_E="x"\n')
        self.assertEqual(bad, ["CONFIG_A=y (got not set)", "CONFIG_B=m (got y)",
                               "CONFIG_C=n (got y)", 'CONFIG_E="str" (got "x")'])


class LogScanTest(unittest.TestCase):
    def test_splats(self):
        for line in [
            "[    3.1] WARNING: CPU: 0 PID: 1 at lib/x.c:1 f+0x1/0x2",
            "[    3.1] BUG: KASAN: slab-out-of-bounds in foo",
            "[    3.1] BUG: sleeping function called from invalid context at mm/x.c:1",
            "[    3.1] WARNING: possible circular locking dependency detected",
            "[    3.1] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
            "unreferenced object 0xffff888003a1c000 (size 64):",
            "[    3.1] Oops: general protection fault, probably for non-canonical address",
            "[    3.1] rust_kernel: panicked at lib/buildid_rust.rs:3:5:",
        ]:
            self.assertEqual(vm.scan_log(line), [line], line)

    def test_clean_lines(self):
        text = "\n".join([
            "[    0.0] Linux version 6.12.117",
            "[    1.0] KASAN: not a splat but mentions it",
            "[    2.0] ok 1 rust_doctests_kernel",
        ])
        self.assertEqual(vm.scan_log(text), ["[    1.0] KASAN: not a splat but mentions it"])


KTAP = """[    1.0] KTAP version 1
[    1.0] 1..3
[    1.1]     KTAP version 1
[    1.1]     # Subtest: suite_a
[    1.1]     # module: m
[    1.1]     1..3
[    1.1]     ok 1 case_one
[    1.1]     not ok 2 case_two
[    1.1]     ok 3 case_three # SKIP not here
[    1.1] # suite_a: pass:1 fail:1 skip:1 total:3
[    1.1] not ok 1 suite_a
[    1.2]     KTAP version 1
[    1.2]     # Subtest: suite_b
[    1.2]     1..1
[    1.2]         KTAP version 1
[    1.2]         # Subtest: param_case
[    1.2]         ok 1 p0
[    1.2]         ok 2 p1
[    1.2]     ok 1 param_case
[    1.2] ok 2 suite_b
[    1.3]     KTAP version 1
[    1.3]     # Subtest: suite_c
[    1.3]     1..2
[    1.3]     ok 1 c_one
"""


class KtapTest(unittest.TestCase):
    def test_counts_cases_and_unfinished_suite(self):
        passed, failed, cases = testrun.parse_ktap(KTAP)
        # suite_c never finished: that is a failure, not silence.
        self.assertEqual((passed, failed), (3, 2))
        self.assertIn(("case_two", False), cases)
        self.assertIn(("param_case", True), cases)

    def test_tap(self):
        text = "TAP version 13\n1..3\nok 1 selftests: proc: a\nnot ok 2 selftests: proc: b\n" \
               "ok 3 selftests: proc: c # SKIP\n# ok 4 not a result\n"
        self.assertEqual(testrun.parse_tap(text), (1, 1))

    def test_buildid_suite_counts_cases_and_skips_fail(self):
        text = ("# selftests: buildid: procmap_buildid\n# 1..3\n"
                "# ok 1 procmap.elf32\n# not ok 2 procmap.malformed\n"
                "# ok 3 stack.lockdep # SKIP not on 9p\n"
                "not ok 1 selftests: buildid: procmap_buildid # exit=1\n")
        self.assertEqual(testrun.parse_buildid_suite(text), (1, 2))

    def test_test_progs_counts_subtests_and_allowed_skips(self):
        text = ("#1/1     build_id/nofault-paged-out:OK\n#1/2     build_id/sleepable:FAIL\n"
                "#1       build_id:FAIL\n#2       stacktrace_build_id:OK\n"
                "#3       stacktrace_build_id_nmi:SKIP\n#4       other:SKIP\n"
                "Summary: 2/3 PASSED, 2 SKIPPED, 1 FAILED\n")
        self.assertEqual(testrun.parse_test_progs(text), (2, 2))

    def test_tool_check_counts_mappings_and_status(self):
        ok = "x    readelf -n build ID: ab   [same]\ny [same]\ntool-status=0\n"
        self.assertEqual(testrun.parse_tool_check(ok), (2, 0))
        bad = "x [same]\nz [DIFFERENT]\ntool-status=1\n"
        self.assertEqual(testrun.parse_tool_check(bad), (1, 2))
        self.assertEqual(testrun.parse_tool_check("tool-status=0\n"), (0, 1))

    def test_buildid_program_without_cases_fails(self):
        text = "# selftests: buildid: perf_buildid\nnot ok 3 selftests: buildid: perf_buildid\n"
        self.assertEqual(testrun.parse_buildid_suite(text), (0, 1))


if __name__ == "__main__":
    unittest.main()


class UnsafeCommentTest(unittest.TestCase):
    def lines(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".rs", delete=False) as f:
            f.write(text)
        try:
            return testrun.unsafe_without_safety_comment(f.name)
        finally:
            os.unlink(f.name)

    def test_commented_blocks_pass(self):
        self.assertEqual(self.lines(
            "fn f() {\n"
            "    // SAFETY: fine.\n"
            "    let x = unsafe { g() };\n"
            "    // SAFETY: also\n"
            "    // fine.\n"
            "    unsafe {\n"
            "        h()\n"
            "    };\n"
            "}\n"
            "// SAFETY: it is.\n"
            "unsafe impl Send for X {}\n"), [])

    def test_missing_comment_is_reported(self):
        self.assertEqual(self.lines(
            "fn f() {\n"
            "    // SAFETY: fine.\n"
            "    let x = unsafe { g() };\n"
            "    let y = unsafe { g() };\n"
            "}\n"
            "unsafe impl Sync for X {}\n"
            "/// Docs mention unsafe { here } in a comment only.\n"), [4, 6])


class BuildWarningTest(unittest.TestCase):
    def test_only_project_files_count(self):
        lines = [
            "warning: unused variable: `x`\n",
            "  --> /cache/tree/linux/rust/kernel/buildid/freader.rs:10:5\n",
            "warning: something upstream\n",
            "  --> /cache/tree/linux/rust/kernel/task.rs:3:1\n",
            "/cache/tree/linux/lib/buildid_kunit.c:12:3: warning: unused [-Wunused]\n",
            "/cache/tree/linux/mm/filemap.c:1:1: warning: upstream\n",
        ]
        found = kbuild.project_warnings(lines)
        self.assertEqual([o for _, o in found], ["rust/kernel.o", "lib/buildid_kunit.o"])
        self.assertIn("unused variable", found[0][0])
