# SPDX-License-Identifier: GPL-2.0
"""BENCHMARKS.md names the commit it measured, and says when it measured none."""

import os
import subprocess
import tempfile
import unittest

from kharness.bench import AB_HEADING, kept_ab_section, measured_commit


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


class MeasuredCommitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = self.tmp.name
        git(self.repo, "init", "-q")
        with open(os.path.join(self.repo, "f"), "w") as f:
            f.write("a\n")
        git(self.repo, "add", "f")
        git(self.repo, "-c", "user.name=t", "-c", "user.email=t@example.org",
            "commit", "-q", "-m", "f")

    def tearDown(self):
        self.tmp.cleanup()

    def test_clean_tree_names_head(self):
        self.assertEqual(measured_commit(self.repo),
                         git(self.repo, "rev-parse", "--short=12", "HEAD"))

    def test_changed_tree_says_so(self):
        with open(os.path.join(self.repo, "f"), "w") as f:
            f.write("b\n")
        self.assertTrue(measured_commit(self.repo).endswith(" with uncommitted changes"))

    def test_benchmark_output_does_not_count(self):
        for name in ("BENCHMARKS.md", "BENCHMARKS.svg"):
            with open(os.path.join(self.repo, name), "w") as f:
                f.write("old\n")
        git(self.repo, "add", "BENCHMARKS.md", "BENCHMARKS.svg")
        git(self.repo, "-c", "user.name=t", "-c", "user.email=t@example.org",
            "commit", "-q", "-m", "bench")
        for name in ("BENCHMARKS.md", "BENCHMARKS.svg"):
            with open(os.path.join(self.repo, name), "w") as f:
                f.write("new\n")
        self.assertEqual(measured_commit(self.repo),
                         git(self.repo, "rev-parse", "--short=12", "HEAD"))
        with open(os.path.join(self.repo, "f"), "w") as f:
            f.write("b\n")
        self.assertTrue(measured_commit(self.repo).endswith(" with uncommitted changes"))

    def test_untracked_files_do_not_count(self):
        with open(os.path.join(self.repo, "new"), "w") as f:
            f.write("c\n")
        self.assertNotIn("uncommitted", measured_commit(self.repo))

    def test_no_checkout(self):
        with tempfile.TemporaryDirectory() as empty:
            self.assertEqual(measured_commit(empty), "unknown (not a git checkout)")


if __name__ == "__main__":
    unittest.main()


class KeptAbSectionTest(unittest.TestCase):
    """make bench rewrites BENCHMARKS.md but keeps its hand-written A/B section."""

    def test_section_is_kept_to_the_end(self):
        doc = f"# Benchmarks\n\n### a table\n\n| x |\n\n{AB_HEADING}\n\nold 1.00\n\n### row\n"
        self.assertEqual(kept_ab_section(doc), f"{AB_HEADING}\n\nold 1.00\n\n### row\n")

    def test_no_section_keeps_nothing(self):
        self.assertEqual(kept_ab_section("# Benchmarks\n\n### a table\n"), "")
        # A mention of the heading in prose is not the section.
        self.assertEqual(kept_ab_section(f"see {AB_HEADING} below\n"), "")
