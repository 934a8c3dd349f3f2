# SPDX-License-Identifier: GPL-2.0
"""The stage verdicts on recorded guest outputs, each rule with a bad case.

tests/data/ holds the kernel log and the guest output of real KUnit and
kselftest boots of the test kernel (trimmed to the lines the verdict reads
and to a few of the rest).  Each bad case is one of them with the one
change a broken kernel, test or harness would make.
"""

import contextlib
import io
import os
import shutil
import tempfile
import unittest

from kharness import parsers, vm

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
def recorded(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def proc_selection():
    return recorded("proc-selection.txt").split()


def write_files(run_dir, files):
    for name, text in files.items():
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(text)


@contextlib.contextmanager
def boot_with(status=0, timed_out=False, files=None):
    run_dir = tempfile.mkdtemp()
    try:
        files = files or {}
        write_files(run_dir, files)
        splats = [f"dmesg.txt: {line.strip()}"
                  for line in vm.scan_log(files.get("dmesg.txt", ""))]
        yield vm.Boot(run_dir, None if timed_out else status, timed_out, splats,
                      timeout=1800, vng_status=0)
    finally:
        shutil.rmtree(run_dir)


def quietly(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


WARNING = ("[   40.1] ------------[ cut here ]------------\n"
           "[   40.1] WARNING: CPU: 1 PID: 321 at drivers/misc/lkdtm/bugs.c:87 "
           "lkdtm_WARNING+0x11/0x20 [lkdtm]\n")


class BootFailuresTest(unittest.TestCase):
    def test_clean_run(self):
        with boot_with(0, files={"dmesg.txt": "[ 1.0] Linux version\n"}) as boot:
            self.assertEqual(boot.failures(), [])

    def test_splat_fails_whatever_the_status(self):
        with boot_with(0, files={"dmesg.txt": WARNING}) as boot:
            self.assertEqual(len(boot.failures()), 2)
            self.assertTrue(all(f.startswith("kernel log: ") for f in boot.failures()))

    def test_no_status_timeout_and_bad_status(self):
        with boot_with(None) as boot:
            self.assertIn("no exit status", boot.failures()[0])
        with boot_with(0, timed_out=True) as boot:
            self.assertIn("timed out", boot.failures()[0])
        with boot_with(2) as boot:
            self.assertEqual(boot.failures(), ["guest command exited 2"])
            self.assertEqual(boot.failures(want_status=2), [])


class RunSplatsTest(unittest.TestCase):
    def test_each_splat_once_from_any_log(self):
        logs = {"dmesg.txt": WARNING, "console.log": WARNING,
                "kmemleak.txt": "unreferenced object 0xffff888009a68a00 (size 32):\n"}
        self.assertEqual(vm.run_splats(logs, True, True), [
            "dmesg.txt: " + WARNING.splitlines()[0],
            "dmesg.txt: " + WARNING.splitlines()[1],
            "kmemleak.txt: unreferenced object 0xffff888009a68a00 (size 32):"])

    def test_missing_kmemleak_scan(self):
        self.assertEqual(vm.run_splats({"dmesg.txt": ""}, True, True),
                         ["kmemleak.txt: missing, so leaks went unchecked "
                          "(the kernel has CONFIG_DEBUG_KMEMLEAK)"])
        self.assertEqual(vm.run_splats({"dmesg.txt": ""}, True, False), [])
        # A guest that never reported has failed already.
        self.assertEqual(vm.run_splats({}, False, True), [])

    def test_kmemleak_turned_off(self):
        logs = {"dmesg.txt": "[ 9.1] kmemleak: Kernel memory leak detector disabled\n",
                "kmemleak.txt": ""}
        self.assertEqual(len(vm.run_splats(logs, True, True)), 1)


class KunitVerdictTest(unittest.TestCase):
    def verdict(self, dmesg, status=0):
        with boot_with(status, files={"dmesg.txt": dmesg}) as boot:
            return quietly(parsers.kunit_verdict, boot)

    def test_recorded_run_passes(self):
        tally = self.verdict(recorded("kunit-dmesg.txt"))
        self.assertEqual(tally.failures, [])
        self.assertGreater(tally.passed, 10)

    def test_missing_case(self):
        text = "\n".join(line for line in recorded("kunit-dmesg.txt").splitlines()
                         if "buildid_tmpfs_holes" not in line)
        failures = self.verdict(text).failures
        self.assertTrue(any("buildid_file/buildid_tmpfs_holes missing" in f for f in failures),
                        failures)
        self.assertTrue(any("plan 1..11 but 10 results" in f for f in failures), failures)

    def test_skip_in_project_suite(self):
        text = recorded("kunit-dmesg.txt").replace(
            "ok 1 buildid_secretmem_rejected",
            "ok 1 buildid_secretmem_rejected # SKIP no memfd_secret() file")
        failures = self.verdict(text).failures
        self.assertTrue(any("buildid_secretmem_rejected skipped" in f for f in failures), failures)

    def test_skip_nested_in_a_project_case(self):
        lines = recorded("kunit-dmesg.txt").splitlines()
        i = next(n for n, line in enumerate(lines)
                 if line.endswith("    ok 1 buildid_buf_valid_and_truncated"))
        lines[i:i] = ["        KTAP version 1",
                      "        # Subtest: buildid_buf_valid_and_truncated",
                      "        ok 1 elf64", "        ok 2 elf32 # SKIP not built"]
        failures = self.verdict("\n".join(lines)).failures
        self.assertEqual(len(failures), 1, failures)
        self.assertIn("buildid_buf_valid_and_truncated/elf32 SKIP", failures[0])

    def test_missing_suite(self):
        text = recorded("kunit-dmesg.txt").replace("buildid_secretmem", "other_suite")
        failures = self.verdict(text).failures
        self.assertTrue(any("buildid_secretmem reported once (found 0)" in f for f in failures),
                        failures)

    def test_suite_cut_off_by_a_crash(self):
        text = recorded("kunit-dmesg.txt")
        text = text[:text.index("buildid_blockfs_not_uptodate")]
        failures = self.verdict(text, status=None).failures
        self.assertTrue(any("never finished" in f for f in failures), failures)
        self.assertTrue(any("no exit status" in f for f in failures), failures)

    def test_failed_case(self):
        text = recorded("kunit-dmesg.txt").replace("    ok 2 buildid_buf_rejects_bad_notes",
                                                   "    not ok 2 buildid_buf_rejects_bad_notes")
        failures = self.verdict(text).failures
        self.assertTrue(any("buildid_buf_rejects_bad_notes failed" in f for f in failures),
                        failures)

    def test_planned_count_must_be_the_expected_one(self):
        # A suite that lost a case from its source plans and reports one
        # fewer: the plan is met, the expected count is not.
        text = recorded("kunit-dmesg.txt").replace("]     1..2\n", "]     1..1\n", 1)
        text = "\n".join(line for line in text.splitlines()
                         if not line.endswith("ok 2 buildid_buf_rejects_bad_notes"))
        failures = self.verdict(text).failures
        self.assertIn("KUnit: buildid_buf plans 2 cases (planned 1)", failures)

    def test_upstream_doctests_are_not_counted(self):
        # The kernel crate's suite is mostly upstream's doctests: its count
        # may change with them, as long as ours report ok.
        text = recorded("kunit-dmesg.txt").replace("    1..117", "    1..116")
        text = "\n".join(line for line in text.splitlines()
                         if not line.endswith("ok 117 rust_doctest_kernel_workqueue_rs_3"))
        self.assertEqual(self.verdict(text).failures, [])

    def test_warning_fails_the_stage(self):
        tally = self.verdict(recorded("kunit-dmesg.txt") + WARNING)
        self.assertTrue(parsers.caused_only_by_warning(tally), tally.failures)
        # A failure of anything else is not "caused only by the WARNING".
        text = recorded("kunit-dmesg.txt").replace("    ok 2 buildid_buf_rejects_bad_notes",
                                                   "    not ok 2 buildid_buf_rejects_bad_notes")
        self.assertFalse(parsers.caused_only_by_warning(self.verdict(text + WARNING)))


class HarnessCheckTest(unittest.TestCase):
    """The self-test passes a provoked run only for the provoked reason."""

    def test_splat_must_be_seen_after_a_successful_command(self):
        with boot_with(0, files={"dmesg.txt": WARNING}) as boot:
            self.assertTrue(parsers.splat_with(boot, "WARNING:", "lkdtm"))
            self.assertFalse(parsers.splat_with(boot, "UBSAN: array-index-out-of-bounds"))
        # modprobe failed: the run fails, but not for the reason under test.
        with boot_with(1, files={"dmesg.txt": WARNING}) as boot:
            self.assertFalse(parsers.splat_with(boot, "WARNING:", "lkdtm"))
        with boot_with(0, timed_out=True, files={"dmesg.txt": WARNING}) as boot:
            self.assertFalse(parsers.splat_with(boot, "WARNING:", "lkdtm"))
        with boot_with(0, files={"dmesg.txt": "[ 1.0] lkdtm: Performing direct entry WARNING\n"}
                       ) as boot:
            self.assertFalse(parsers.splat_with(boot, "WARNING:", "lkdtm"))


class KselftestVerdictTest(unittest.TestCase):
    def verdict(self, output, status=0, dmesg="", parts=parsers.KSELFTEST_PARTS):
        with boot_with(status, files={"guest-output.txt": output, "dmesg.txt": dmesg}) as boot:
            return quietly(parsers.kselftest_verdict, boot, parts, proc_selection())

    def failures(self, output, **kwargs):
        return self.verdict(output, **kwargs).failures

    def test_recorded_run_passes(self):
        tally = self.verdict(recorded("kselftest-output.txt"))
        self.assertEqual(tally.failures, [])
        self.assertGreater(tally.passed, 40)

    def test_warning_fails_the_stage(self):
        tally = self.verdict(recorded("kselftest-output.txt"), dmesg=WARNING)
        self.assertTrue(parsers.caused_only_by_warning(tally), tally.failures)

    def test_test_progs_exit_status(self):
        text = recorded("kselftest-output.txt").replace("=== end bpf status=0 ===",
                                                        "=== end bpf status=1 ===")
        self.assertEqual(self.failures(text), ["test_progs exited 1"])

    def test_test_progs_with_the_cache_on(self):
        text = recorded("kselftest-output.txt").replace("buildid-cache=0", "buildid-cache=1")
        self.assertEqual(self.failures(text),
                         ["test_progs did not run with the build ID cache off"])

    def test_test_progs_skip_only_without_pmu(self):
        text = recorded("kselftest-output.txt")
        self.assertIn("stacktrace_build_id_nmi:SKIP", text)
        failures = self.failures(text.replace("hw-pmu=no", "hw-pmu=yes"))
        self.assertEqual(len(failures), 1)
        self.assertIn("the guest has a hardware PMU", failures[0])
        failures = self.failures(text.replace("stacktrace_build_id:OK",
                                              "stacktrace_build_id:SKIP"))
        self.assertIn("BPF selftest stacktrace_build_id skipped, but it needs no PMU",
                      failures)

    def test_test_progs_selected_test_missing(self):
        text = "\n".join(line for line in recorded("kselftest-output.txt").splitlines()
                         if not line.startswith("#") or "stacktrace_build_id:" not in line)
        failures = self.failures(text)
        self.assertTrue(any("stacktrace_build_id reported once (0 results)" in f
                            for f in failures), failures)

    def test_proc_list_must_match_selection(self):
        text = recorded("kselftest-output.txt")
        name = proc_selection()[0].split(":")[1]
        cut = "\n".join(line for line in text.splitlines()
                        if not line.endswith(f"selftests: proc: {name}"))
        failures = self.failures(cut)
        self.assertTrue(any("upstream kselftests reported exactly" in f and name in f
                            for f in failures), failures)

    def test_buildid_skip_fails(self):
        text = recorded("kselftest-output.txt").replace(
            "# ok 10 stack.sleepable_read_without_mmap_lock",
            "# ok 10 stack.sleepable_read_without_mmap_lock # SKIP not on 9p")
        failures = self.failures(text)
        self.assertTrue(any("sleepable_read_without_mmap_lock skipped" in f for f in failures),
                        failures)

    def test_buildid_other_directives_fail(self):
        for directive in ("XFAIL known", "TODO later", "skipped: no 9p"):
            text = recorded("kselftest-output.txt").replace(
                "# ok 11 stack.perf_event_cpu_clock",
                f"# ok 11 stack.perf_event_cpu_clock # {directive}")
            failures = self.failures(text)
            self.assertTrue(any("perf_event_cpu_clock" in f and "only a plain ok" in f
                                for f in failures), (directive, failures))

    def test_buildid_program_skipped_by_the_runner(self):
        # The program exits with KSFT_SKIP before its plan: the runner
        # reports "ok ... # SKIP" and no cases.
        text = recorded("kselftest-output.txt")
        start = text.index("# selftests: buildid: perf_buildid")
        end = text.index("ok 3 selftests: buildid: perf_buildid")
        text = (text[:start] + "# selftests: buildid: perf_buildid\n"
                + "ok 3 selftests: buildid: perf_buildid # SKIP\n"
                + text[end + len("ok 3 selftests: buildid: perf_buildid\n"):])
        failures = self.failures(text)
        self.assertTrue(any("perf_buildid SKIP" in f for f in failures), failures)
        self.assertTrue(any("perf_buildid reported once (found 0)" in f for f in failures),
                        failures)

    def test_buildid_program_died_mid_plan(self):
        lines = recorded("kselftest-output.txt").splitlines()
        text = "\n".join(line for line in lines if not line.startswith("# ok 5 procmap."))
        failures = self.failures(text)
        self.assertTrue(any("procmap_buildid: plan 1..30 but 29 results" in f
                            for f in failures), failures)

    def test_guest_died_in_a_part(self):
        text = recorded("kselftest-output.txt")
        text = text[:text.index("=== part bpf ===") + 200]
        failures = self.failures(text, status=None)
        self.assertIn("kselftest part 'bpf' started but never ended", failures)
        self.assertIn("kselftest part 'tool' never started", failures)
        self.assertTrue(any("no exit status" in f for f in failures), failures)

    def test_tool_disagreement(self):
        text = recorded("kselftest-output.txt").replace("[same]", "[DIFFERENT]", 1)
        self.assertTrue(any("buildid tool agrees" in f for f in self.failures(text)))


if __name__ == "__main__":
    unittest.main()
