# SPDX-License-Identifier: GPL-2.0
"""Config check, kernel log scan, SAFETY comments and build warnings."""

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
