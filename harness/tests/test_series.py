# SPDX-License-Identifier: GPL-2.0
"""The patch series: manifest rules, files built up step by step, and what 'make series' writes."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

from kharness import series, seriescheck
from kharness.common import HarnessError

from tests.test_tree import write, read

FIRST = """lib: add a Rust file

Why it is added.
---
--- a/lib/Makefile
+++ b/lib/Makefile
@@ -1,2 +1,3 @@
 obj-y += a.o
 obj-y += b.o
+obj-y += rust.o
"""

# A later change to the file the first commit adds.
SECOND = """lib: rust: say more

Why it says more.

Fixes: 0123456789ab ("lib: add a Rust file")
Cc: stable@vger.kernel.org
---
--- a/lib/rust.rs
+++ b/lib/rust.rs
@@ -1,2 +1,3 @@
 // Rust
 fn a() {}
+fn b() {}
"""


class SeriesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = os.path.join(self.tmp.name, "repo")
        self.pristine = os.path.join(self.tmp.name, "pristine")
        write(os.path.join(self.pristine, "lib/Makefile"), "obj-y += a.o\nobj-y += b.o\n")
        # get_maintainer.pl's output for a patch that touches lib/Makefile (and for any other).
        write(os.path.join(self.pristine, "scripts/get_maintainer.pl"),
              'print "Lib Maintainer <lib\\@example.org> (maintainer:LIBRARY)\\n";\n'
              'print "A Reviewer <rev\\@example.org> (reviewer:LIBRARY)\\n";\n'
              'print "linux-kernel\\@vger.kernel.org (open list)\\n";\n')
        write(os.path.join(self.repo, "lib/rust.rs"), "// Rust\nfn a() {}\nfn b() {}\n")
        write(os.path.join(self.repo, "patches/0001-lib-add.patch"), FIRST)
        write(os.path.join(self.repo, "patches/0002-lib-more.patch"), SECOND)
        write(os.path.join(self.repo, "patches/cover-letter"),
              "lib: a series\n\nNumbers ({{commit}}):\n\n{{table 1: fast}}\n")
        write(os.path.join(self.repo, "BENCHMARKS.md"),
              "measuring commit 0123456789abcdef\n\n| what | ns |\n|---|---:|\n"
              "| slow | 9 |\n| fast | 1 |\n")
        self.manifest(["0001-lib-add.patch", "\tlib/rust.rs", "0002-lib-more.patch"])

    def tearDown(self):
        self.tmp.cleanup()

    def manifest(self, lines):
        write(os.path.join(self.repo, "patches/series"),
              "# comment\nFrom: A Developer <dev@example.org>\n\n" + "\n".join(lines) + "\n")

    def load(self):
        return series.load(self.repo, ["lib/rust.rs"])

    def test_project_file_is_added_as_the_later_diff_undone(self):
        states = series.states(self.load(), self.pristine, self.repo)
        self.assertEqual(states[0]["lib/rust.rs"][0], b"// Rust\nfn a() {}\n")
        self.assertEqual(states[1]["lib/rust.rs"][0], b"// Rust\nfn a() {}\nfn b() {}\n")
        self.assertEqual(states[0]["lib/Makefile"], states[1]["lib/Makefile"])

    def test_generated_patches_apply_with_git_am_and_sign_off(self):
        out = os.path.join(self.tmp.name, "out")
        covers, patches, final = series.generate(self.load(), self.pristine, out, self.repo,
                                                 mail=True)
        self.assertEqual([os.path.relpath(p, out)[:11] for p in covers + patches],
                         ["1-series/00", "1-series/00", "1-series/00"])
        self.assertEqual([os.path.basename(p)[:4] for p in covers + patches],
                         ["0000", "0001", "0002"])
        cover = read(covers[0])
        self.assertIn("Subject: [RFC PATCH 0/2] lib: a series", cover)
        self.assertIn("To: Lib Maintainer <lib@example.org>\n"
                      "Cc: A Reviewer <rev@example.org>,\n linux-kernel@vger.kernel.org\n\n",
                      cover)
        self.assertIn("To: Lib Maintainer <lib@example.org>\n", read(patches[0]))
        self.assertIn("measured at commit 0123456789ab", cover)
        self.assertIn("| what | ns |\n|---|---:|\n| fast | 1 |", cover)
        self.assertNotIn("| slow |", cover)
        second = read(patches[1])
        # Signed-off-by joins the trailer block instead of starting another.
        self.assertIn("Cc: stable@vger.kernel.org\nSigned-off-by: A Developer <dev@example.org>",
                      second)
        self.assertIn("Signed-off-by: A Developer <dev@example.org>\n---", read(patches[0]))
        self.assertEqual(series.apply_generated(patches, self.pristine, ["lib/Makefile",
                                                                         "lib/rust.rs"]), final)
        # git am on a git repository of the pristine tree gives the same files.
        work = os.path.join(self.tmp.name, "am")
        subprocess.run(["cp", "-a", self.pristine, work], check=True)
        env = {"PATH": os.environ["PATH"], "HOME": self.tmp.name, "GIT_CONFIG_NOSYSTEM": "1"}
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-q", "-m", "p"],
                    ["git", "-c", "user.name=x", "-c", "user.email=x@y", "am", "-q"]
                    + patches):
            subprocess.run(cmd, cwd=work, env=env, check=True, capture_output=True)
        for path, (data, _mode) in final.items():
            with open(os.path.join(work, path), "rb") as f:
                self.assertEqual(f.read(), data, path)

    def test_each_series_has_its_own_cover_letter_and_numbers(self):
        write(os.path.join(self.repo, "patches/cover-letter-fixes"), "lib: fixes\n\nFirst.\n")
        self.manifest(["Series: fixes cover-letter-fixes PATCH lib", "0001-lib-add.patch",
                       "\tlib/rust.rs", "Series: more cover-letter RFC PATCH lib-next",
                       "0002-lib-more.patch"])
        out = os.path.join(self.tmp.name, "out")
        covers, patches, final = series.generate(self.load(), self.pristine, out, self.repo)
        self.assertEqual([os.path.relpath(p, out)[:15] for p in covers + patches],
                         ["1-fixes/0000-co", "2-more/0000-cov", "1-fixes/0001-li",
                          "2-more/0001-lib"])
        self.assertIn("Subject: [PATCH lib 0/1] lib: fixes", read(covers[0]))
        self.assertIn("Subject: [PATCH lib 1/1] lib: add a Rust file", read(patches[0]))
        self.assertIn("Subject: [RFC PATCH lib-next 0/1] lib: a series", read(covers[1]))
        self.assertIn("Subject: [RFC PATCH lib-next 1/1] lib: rust: say more", read(patches[1]))
        self.assertEqual(series.apply_generated(patches, self.pristine, ["lib/Makefile",
                                                                         "lib/rust.rs"]), final)
        self.manifest(["0001-lib-add.patch", "\tlib/rust.rs",
                       "Series: more cover-letter RFC PATCH", "0002-lib-more.patch"])
        with self.assertRaises(HarnessError) as cm:
            self.load()
        self.assertIn("patches before the first 'Series:' line", str(cm.exception))

    def test_cover_letters_name_their_base_as_format_patch_base_does(self):
        self.manifest(["Series: fixes cover-letter-fixes PATCH lib", "0001-lib-add.patch",
                       "\tlib/rust.rs", "Series: more cover-letter RFC PATCH lib-next",
                       "0002-lib-more.patch"])
        write(os.path.join(self.repo, "patches/cover-letter-fixes"), "lib: fixes\n\nFirst.\n")
        out = os.path.join(self.tmp.name, "out")
        entries = self.load()
        covers, patches, _final = series.generate(entries, self.pristine, out, self.repo)
        # What git format-patch --base writes for the second series, on a repository of
        # the pristine tree with the first series applied.
        work = os.path.join(self.tmp.name, "base")
        subprocess.run(["cp", "-a", self.pristine, work], check=True)
        env = {"PATH": os.environ["PATH"], "HOME": self.tmp.name, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@y", "GIT_COMMITTER_NAME": "x",
               "GIT_COMMITTER_EMAIL": "x@y"}

        def git(*args):
            return subprocess.run(["git"] + list(args), cwd=work, env=env, check=True,
                                  capture_output=True, text=True).stdout

        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", "pristine")
        base = git("rev-parse", "HEAD").strip()
        git("am", "-q", *patches)
        git("format-patch", "-q", "--cover-letter", f"--base={base}", "-o", "fp", "HEAD~1")
        with open(os.path.join(work, "fp", "0000-cover-letter.patch")) as f:
            want = f.read().split("\n-- \n")[0].rstrip().split("\n\n")[-1]
        self.assertIn("prerequisite-patch-id: ", want)
        series.add_base_info(covers, patches, entries.parts, base)
        self.assertTrue(read(covers[0]).endswith(f"\n\nbase-commit: {base}\n"))
        self.assertTrue(read(covers[1]).endswith(f"\n\n{want}\n"), read(covers[1]))

    def test_file_in_no_commit_is_refused(self):
        with self.assertRaises(HarnessError) as cm:
            series.load(self.repo, ["lib/rust.rs", "lib/orphan.c"])
        self.assertIn("project files that no commit of patches/series adds:\n  lib/orphan.c",
                      str(cm.exception))

    def test_diff_before_the_file_is_added_is_refused(self):
        self.manifest(["0001-lib-add.patch", "0002-lib-more.patch", "\tlib/rust.rs"])
        with self.assertRaises(HarnessError) as cm:
            self.load()
        self.assertIn("0002-lib-more.patch diffs lib/rust.rs before", str(cm.exception))

    def test_unlisted_patch_and_numbering_are_refused(self):
        self.manifest(["0001-lib-add.patch", "\tlib/rust.rs"])
        with self.assertRaises(HarnessError) as cm:
            self.load()
        self.assertIn("does not list 0002-lib-more.patch", str(cm.exception))
        self.manifest(["0002-lib-more.patch", "\tlib/rust.rs", "0001-lib-add.patch"])
        with self.assertRaises(HarnessError) as cm:
            self.load()
        self.assertIn("0002-lib-more.patch is entry 1 of the series", str(cm.exception))

    def test_later_diff_that_no_longer_fits_names_it(self):
        write(os.path.join(self.repo, "lib/rust.rs"), "// Rust, rewritten\n")
        with self.assertRaises(HarnessError) as cm:
            series.states(self.load(), self.pristine, self.repo)
        self.assertIn("0002-lib-more.patch does not apply in reverse to the final content of "
                      "lib/rust.rs", str(cm.exception))

    def test_signoff_in_the_message_and_bad_subject_are_refused(self):
        write(os.path.join(self.repo, "patches/0001-lib-add.patch"),
              FIRST.replace("Why it is added.", "Why.\n\nSigned-off-by: X <x@y.org>"))
        with self.assertRaises(HarnessError) as cm:
            self.load()
        self.assertIn("Signed-off-by is added by 'make series'", str(cm.exception))
        write(os.path.join(self.repo, "patches/0001-lib-add.patch"),
              FIRST.replace("lib: add a Rust file", "Add a Rust file"))
        with self.assertRaises(HarnessError) as cm:
            self.load()
        self.assertIn("is not 'subsystem: summary'", str(cm.exception))

    def test_cover_letter_row_that_is_gone_is_an_error(self):
        with self.assertRaises(HarnessError) as cm:
            series.expand_cover("{{table 1: medium}}", "measuring commit abcdef1\n\n"
                                "| what | ns |\n|---|---:|\n| fast | 1 |\n")
        self.assertIn("table 1 of BENCHMARKS.md has no row 'medium'", str(cm.exception))

    def test_kconfig_symbols_of_the_series(self):
        entry = series.Entry("0001-x.patch", "lib: x\n\nWhy.", [
            ("lib/Kconfig", "+config RUST_BUILDID\n+\tbool \"x\"\n context\n"),
            ("lib/Makefile", "+config NOT_A_SYMBOL\n")], [])
        self.assertEqual(series.kconfig_symbols(series.Series("A <a@b.c>", [entry], "")),
                         {"CONFIG_RUST_BUILDID": 0})

    def test_later_diff_that_is_already_in_the_final_file_is_refused(self):
        # patch -R --batch would apply it forward and succeed: the earlier
        # commit would then hold the change and the later one revert it.
        write(os.path.join(self.repo, "lib/rust.rs"), "// Rust\nfn a() {}\n")
        with self.assertRaises(HarnessError) as cm:
            series.states(self.load(), self.pristine, self.repo)
        self.assertIn("does not apply in reverse", str(cm.exception))


class CheckpatchAcceptedTest(unittest.TestCase):
    """A report counts against patches/checkpatch-accepted by patch and type."""

    def run_with(self, accepted_text, reports):
        with tempfile.TemporaryDirectory() as tmp:
            accepted = os.path.join(tmp, "accepted")
            write(accepted, accepted_text)
            patches = [os.path.join(tmp, "2-part", name) for name in
                       ("0001-a.patch", "0002-b.patch")]
            counts = {p: c for p, c in zip(patches, reports)}
            tally = seriescheck.Tally()
            with mock.patch.object(seriescheck, "ACCEPTED", accepted), \
                    mock.patch.object(seriescheck, "checkpatch_counts",
                                      lambda _cp, patch: (counts[patch], "")), \
                    mock.patch("builtins.print"):
                seriescheck.checkpatch_strict(patches, "checkpatch.pl", tally)
            return tally

    def test_counts_by_patch_and_type(self):
        text = "# why\n0001 LONG_LINE 2 a table row\n"
        self.assertEqual(self.run_with(text, [{"LONG_LINE": 2}, {}]).counts, (3, 0))
        tally = self.run_with(text, [{"LONG_LINE": 3}, {}])
        self.assertEqual(tally.failures, [
            "checkpatch --strict 0001 (2-part/0001-a.patch): not in "
            "patches/checkpatch-accepted: LONG_LINE x1"])
        # The same type in another patch is not covered.
        tally = self.run_with(text, [{"LONG_LINE": 2}, {"LONG_LINE": 1}])
        self.assertEqual(len(tally.failures), 1)
        self.assertIn("0002-b.patch", tally.failures[0])
        # Fewer reports than the list accepts: the count must come down.
        tally = self.run_with(text, [{"LONG_LINE": 1}, {}])
        self.assertEqual(tally.failures, [
            "checkpatch --strict 0001 (2-part/0001-a.patch): not in "
            "patches/checkpatch-accepted: LONG_LINE: 1, but the list accepts 2"])

    def test_entry_nothing_needs_fails(self):
        tally = self.run_with("0002 BRACES 1 why\n", [{}, {}])
        self.assertEqual(tally.failures, [
            "every entry of patches/checkpatch-accepted is still needed; stale: 0002 BRACES"])

    def test_entry_without_a_reason_is_refused(self):
        with self.assertRaises(HarnessError):
            self.run_with("0001 LONG_LINE 2\n", [{}, {}])


if __name__ == "__main__":
    unittest.main()
