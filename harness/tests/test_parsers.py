# SPDX-License-Identifier: GPL-2.0
"""Config check, kernel log scan, build warnings, clippy's SAFETY lint, counts."""

import contextlib
import io
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from kharness import kbuild, lint, parsers, tree, vm
from kharness.common import REPO
from kharness.tally import Tally
from tests.test_verdict import quietly

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
            "[    3.1] rust_kernel: panicked at lib/buildid/buildid_rust.rs:3:5:",
        ]:
            self.assertEqual(vm.scan_log(line), [line], line)

    def test_clean_lines(self):
        text = "\n".join([
            "[    0.0] Linux version 6.12.117",
            "[    1.0] KASAN: not a splat but mentions it",
            "[    2.0] ok 1 rust_doctests_kernel",
        ])
        self.assertEqual(vm.scan_log(text), ["[    1.0] KASAN: not a splat but mentions it"])


# Output of clippy-driver in a kernel build, in the form it prints it: the
# tree is under the cache, and kbuild gives rustc the sources by absolute
# path.  The second finding is in an upstream file.
TREE = "/root/.cache/rust-buildid/tree/6.12.117-1/linux"
CLIPPY_OUTPUT = f"""\
warning: unsafe block missing a safety comment
  --> {TREE}/rust/kernel/folio.rs:12:5
   |
12 |     unsafe {{ bindings::folio_put(self.as_raw()) }};
   |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   |
   = help: consider adding a safety comment on the preceding line
   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#undocumented_unsafe_blocks
   = note: requested on the command line with `-W clippy::undocumented-unsafe-blocks`

warning: unsafe block missing a safety comment
  --> {TREE}/rust/kernel/task.rs:98:9
   |
98 |         unsafe {{ &*ptr.cast() }}
   |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   |
   = help: consider adding a safety comment on the preceding line
   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#undocumented_unsafe_blocks

warning: 2 warnings emitted

warning: unsafe impl missing a safety comment
   --> {TREE}/samples/rust/rust_buildid.rs:140:1
    |
140 | unsafe impl Sync for Device {{}}
    | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    |
    = help: consider adding a safety comment on the preceding line
    = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#undocumented_unsafe_blocks

warning: 1 warning emitted

"""


class ClippyOutputTest(unittest.TestCase):
    """clippy::undocumented_unsafe_blocks findings fail the build in the project's files only."""

    def test_findings_in_project_files(self):
        found = kbuild.project_warnings(CLIPPY_OUTPUT.splitlines(keepends=True))
        self.assertEqual(found, [
            ("rust/kernel/folio.rs:12: warning: unsafe block missing a safety comment",
             "rust/kernel.o"),
            ("samples/rust/rust_buildid.rs:140: warning: unsafe impl missing a safety comment",
             "samples/rust/rust_buildid.o"),
        ])

    def test_upstream_findings_are_ignored(self):
        upstream = CLIPPY_OUTPUT[CLIPPY_OUTPUT.index("warning: unsafe block", 10):
                                 CLIPPY_OUTPUT.index("warning: 2 warnings")]
        self.assertIn("rust/kernel/task.rs:98:9", upstream)
        self.assertEqual(kbuild.project_warnings(upstream.splitlines(keepends=True)), [])

    def test_every_build_runs_the_lint(self):
        make_vars = kbuild.toolchain_vars()
        self.assertIn("CLIPPY=1", make_vars)
        self.assertIn("CLIPPY_DRIVER=/usr/bin/clippy-driver", make_vars)


# kbuild's record of a clippy build of the kernel crate (rust/.kernel.o.cmd,
# as scripts/basic/fixdep writes it), shortened: most flags and the sources
# it depends on are cut.  The lint comes from Linux 6.12.117's
# rust_common_flags.
KERNEL_O_RECORD = """\
savedcmd_rust/kernel.o := OBJTREE=/root/.cache/rust-buildid/build/6.12.117-1 \
/usr/bin/clippy-driver --edition=2021 -Zbinary_dep_depinfo=y -Astable_features \
-Dunsafe_op_in_unsafe_fn -Wclippy::all -Wclippy::undocumented_unsafe_blocks \
-Cpanic=abort -Copt-level=2 \
--emit=dep-info=rust/.kernel.o.d --emit=obj=rust/kernel.o \
--emit=metadata=rust/libkernel.rmeta --crate-type rlib -Lrust --crate-name kernel \
/root/.cache/rust-buildid/tree/6.12.117-1/linux/rust/kernel/lib.rs --sysroot=/dev/null

source_rust/kernel.o := /root/.cache/rust-buildid/tree/6.12.117-1/linux/rust/kernel/lib.rs

deps_rust/kernel.o := \\
  /root/.cache/rust-buildid/tree/6.12.117-1/linux/rust/kernel/lib.rs \\
  /root/.cache/rust-buildid/tree/6.12.117-1/linux/rust/kernel/folio.rs \\
  rust/libmacros.so \\

rust/kernel.o: $(deps_rust/kernel.o)

$(deps_rust/kernel.o):
"""


FOLIO = "rust/kernel/folio.rs"


class UnsafeLintRecordTest(unittest.TestCase):
    """The lint stage's reading of how kbuild compiled each of the project's objects."""

    def test_file_that_no_mod_declares(self):
        self.assertEqual(lint.unsafe_lint_problem("rust/kernel.o", KERNEL_O_RECORD,
                                                  "rust/kernel/orphan.rs"),
                         "rust/kernel/orphan.rs is not among the sources of rust/kernel.o "
                         "(no mod declares it?)")
        self.assertEqual(lint.dependencies(KERNEL_O_RECORD)[2], "rust/libmacros.so")

    def test_linted_object_passes(self):
        self.assertIsNone(lint.unsafe_lint_problem("rust/kernel.o", KERNEL_O_RECORD, FOLIO))

    def test_object_not_there(self):
        self.assertIn("not built", lint.unsafe_lint_problem("rust/kernel.o", None, FOLIO))

    def test_not_compiled_by_clippy(self):
        record = KERNEL_O_RECORD.replace("/usr/bin/clippy-driver", "/usr/bin/rustc")
        self.assertEqual(lint.unsafe_lint_problem("rust/kernel.o", record, FOLIO),
                         "rust/kernel.o was not compiled by clippy-driver")

    def test_compiled_without_the_lint(self):
        record = KERNEL_O_RECORD.replace(" -Wclippy::undocumented_unsafe_blocks", "")
        self.assertEqual(lint.unsafe_lint_problem("rust/kernel.o", record, FOLIO),
                         "rust/kernel.o was compiled without "
                         "-Wclippy::undocumented_unsafe_blocks")
        self.assertIn("holds no command", lint.unsafe_lint_problem("rust/kernel.o", "", FOLIO))

    def test_record_of_an_object(self):
        with tempfile.TemporaryDirectory() as build:
            os.makedirs(os.path.join(build, "rust"))
            with open(os.path.join(build, "rust", ".kernel.o.cmd"), "w") as f:
                f.write(KERNEL_O_RECORD)
            # Removed by the build for a warning: its record alone is not enough.
            self.assertIsNone(lint.kbuild_record(build, "rust/kernel.o"))
            open(os.path.join(build, "rust", "kernel.o"), "w").close()
            self.assertEqual(lint.kbuild_record(build, "rust/kernel.o"), KERNEL_O_RECORD)
            self.assertIsNone(lint.kbuild_record(build, "lib/buildid/buildid_rust.o"))


class BuildWarningTest(unittest.TestCase):
    def test_only_project_files_count(self):
        lines = [
            "warning: unused variable: `x`\n",
            "  --> /cache/tree/linux/lib/buildid/freader.rs:10:5\n",
            "warning: something upstream\n",
            "  --> /cache/tree/linux/rust/kernel/task.rs:3:1\n",
            "/cache/tree/linux/lib/buildid_kunit.c:12:3: warning: unused [-Wunused]\n",
            "/cache/tree/linux/mm/filemap.c:1:1: warning: upstream\n",
        ]
        found = kbuild.project_warnings(lines)
        self.assertEqual([o for _, o in found], ["lib/buildid/buildid_rust.o", "lib/buildid_kunit.o"])
        self.assertIn("unused variable", found[0][0])


RUST_FILES = [f for f in tree.project_files(REPO) if f.endswith(".rs")]


class LintStageTest(unittest.TestCase):
    """The lint stage checks each Rust file of the project through its object's record."""

    def test_unbuilt_object_fails_its_files(self):
        with tempfile.TemporaryDirectory() as build:
            for obj in ("rust/kernel.o", "lib/buildid/buildid_rust.o"):
                path = os.path.join(build, obj)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "w").close()
                with open(os.path.join(os.path.dirname(path),
                                       f".{os.path.basename(obj)}.cmd"), "w") as f:
                    # Built from every Rust file of the project.
                    f.write(KERNEL_O_RECORD.replace(
                        "  rust/libmacros.so \\\n",
                        "".join(f"  /tree/linux/{rs} \\\n" for rs in RUST_FILES)))
            kernel = mock.Mock(build=build, source=mock.Mock(tree="/nonexistent"))
            real_run = subprocess.run

            def run(cmd, **kwargs):
                # git lists the project's files; rustfmt, checkpatch, ... pass.
                if cmd[0] == "git":
                    return real_run(cmd, **kwargs)
                return subprocess.CompletedProcess(cmd, 0, stdout="")

            # The series' own checks (checkpatch of the generated patches,
            # git am) need the kernel source; they are tested on their own.
            with mock.patch.object(subprocess, "run", run), \
                    mock.patch.object(lint, "generate", return_value=([], [], None, None)), \
                    mock.patch.object(lint, "checkpatch_strict"), \
                    mock.patch.object(lint, "am_check"):
                tally = quietly(lint.stage_lint, kernel)
        unsafe = [f for f in tally.failures if "SAFETY" in f]
        self.assertEqual(unsafe, [
            "every unsafe block in samples/rust/rust_buildid.rs has a SAFETY comment "
            "(clippy::undocumented_unsafe_blocks in samples/rust/rust_buildid.o): "
            "samples/rust/rust_buildid.o is not built (the build finds a warning in it, "
            "or never ran)"])
        self.assertGreater(tally.passed, 10)

class CountsTest(unittest.TestCase):
    """The host stage's counts of cargo's and unittest's own reports."""

    CARGO = ("running 3 tests\n"
             "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
             "test result: FAILED. 5 passed; 2 failed; 0 ignored; 0 measured\n")

    def test_cargo(self):
        self.assertEqual(parsers.cargo_counts(self.CARGO, 101), (8, 2))
        # A cargo that fails before any test reports (a build error) fails once.
        self.assertEqual(parsers.cargo_counts("error[E0425]: cannot find value\n", 101), (0, 1))
        self.assertEqual(parsers.cargo_counts(self.CARGO.splitlines()[1], 0), (3, 0))

    def test_unittest(self):
        self.assertEqual(parsers.unittest_counts("....\nRan 66 tests in 0.5s\n\nOK\n", 0), (66, 0))
        self.assertEqual(parsers.unittest_counts(
            "Ran 66 tests in 0.5s\n\nFAILED (failures=2, errors=1)\n", 1), (63, 3))
        self.assertEqual(parsers.unittest_counts("ImportError: no module\n", 1), (0, 1))


class RustServesTest(unittest.TestCase):
    """The build stage's check that the kernel links the Rust lib/buildid."""

    # 'nm -A vmlinux.a' of a test kernel, the lines that matter and one that does not.
    RUST = ("vmlinux.a:lib/buildid/buildid_rust.o:00000000000005e0 T build_id_parse\n"
            "vmlinux.a:lib/buildid/buildid_rust.o:00000000000006b0 T build_id_parse_buf\n"
            "vmlinux.a:lib/buildid/buildid_rust.o:0000000000000700 T build_id_parse_file\n"
            "vmlinux.a:lib/buildid/buildid_rust.o:0000000000000790 T build_id_parse_nofault\n"
            "vmlinux.a:lib/buildid_ref.o:0000000000000570 T build_id_ref_parse\n"
            "vmlinux.a:kernel/bpf/stackmap.o:                 U build_id_parse_nofault\n")

    def verdict(self, nm):
        return parsers.rust_serves_verdict(parsers.buildid_providers(nm))

    def test_rust_kernel_passes(self):
        self.assertTrue(self.verdict(self.RUST)[0])

    def test_c_kernel_fails(self):
        # CONFIG_RUST_BUILDID=n: lib/buildid.c defines them all.
        ok, text = self.verdict(self.RUST.replace("lib/buildid/buildid_rust.o", "lib/buildid.o"))
        self.assertFalse(ok)
        self.assertIn("build_id_parse: lib/buildid.o", text)

    def test_missing_or_twice_defined_export_fails(self):
        missing = "".join(line + "\n" for line in self.RUST.splitlines()
                          if not line.endswith(" build_id_parse_buf"))
        ok, text = self.verdict(missing)
        self.assertFalse(ok)
        self.assertIn("build_id_parse_buf: not defined", text)
        twice = self.RUST + "vmlinux.a:lib/buildid.o:0000000000000010 T build_id_parse\n"
        self.assertFalse(self.verdict(twice)[0])

    def test_no_output_fails(self):
        self.assertFalse(self.verdict("")[0])


class TallyTest(unittest.TestCase):
    def test_checks_counts_and_total(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            tally = Tally()
            tally.check(True, "one")
            tally.check(True, "quiet", quiet_ok=True)
            tally.check(False, "two", quiet_ok=True)
            tally.add(3, 1)
            status = tally.total()
        self.assertEqual(out.getvalue(), "ok - one\nnot ok - two\n5 passed, 2 failed\n")
        self.assertEqual((tally.counts, tally.failures, status), ((5, 2), ["two"], 1))
        with contextlib.redirect_stdout(out):
            self.assertEqual(Tally().total(), 0)
