# SPDX-License-Identifier: GPL-2.0
"""Overlay and cache behaviour of kharness.tree on a small fake source."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

from kharness import tree
from kharness.common import HarnessError


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def read(path):
    with open(path) as f:
        return f.read()


MESSAGE = """lib: build buildid.o only with CONFIG_X

So that the Rust implementation can replace it.
"""

PATCH = MESSAGE + """---
--- a/lib/Makefile
+++ b/lib/Makefile
@@ -1,3 +1,3 @@
 obj-y += a.o
-obj-y += buildid.o
+obj-$(CONFIG_X) += buildid.o
 obj-y += c.o
"""


class OverlayTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        self.pristine = os.path.join(root, "pristine")
        self.tree = os.path.join(root, "tree")
        self.repo = os.path.join(root, "repo")
        self.patches = os.path.join(self.repo, "patches")
        write(os.path.join(self.pristine, "lib/Makefile"),
              "obj-y += a.o\nobj-y += buildid.o\nobj-y += c.o\n")
        write(os.path.join(self.pristine, "lib/buildid.c"), "/* C */\n")
        write(os.path.join(self.repo, "lib/buildid_rust.rs"), "// Rust\n")
        write(os.path.join(self.patches, "0001-lib-build.patch"), PATCH)
        self.write_series(["0001-lib-build.patch", "\tlib/buildid_rust.rs"])
        write(os.path.join(self.patches, "cover-letter"), "lib: a series\n\nWhy.\n")
        write(os.path.join(self.repo, "BENCHMARKS.md"), "measuring commit abcdef1\n")
        subprocess.run(["cp", "-a", self.pristine, self.tree], check=True)
        self.src = mock.Mock(spec=tree.Source)
        self.src.pristine = self.pristine
        self.src.tree = self.tree
        self.src.tree_manifest = os.path.join(root, "tree.manifest")
        self.src.overlay_state = os.path.join(root, "overlay.json")
        self.src.ensure_tree = mock.Mock(return_value=False)
        self.src.generated_series = mock.Mock(return_value=os.path.join(root, "generated"))
        self.src.staged = lambda repo: tree.Source.staged(self.src, repo)

    def write_series(self, lines):
        write(os.path.join(self.patches, "series"),
              "From: A Developer <dev@example.org>\n" + "\n".join(lines) + "\n")

    def tearDown(self):
        self.tmp.cleanup()

    def overlay(self):
        return tree.Source.overlay(self.src, repo=self.repo)

    def test_applies_patches_and_files(self):
        changed, _ = self.overlay()
        self.assertEqual(changed, ["lib/Makefile", "lib/buildid_rust.rs"])
        self.assertIn("obj-$(CONFIG_X) += buildid.o", read(os.path.join(self.tree, "lib/Makefile")))
        self.assertEqual(read(os.path.join(self.tree, "lib/buildid_rust.rs")), "// Rust\n")
        # The pristine copy is never modified.
        self.assertIn("obj-y += buildid.o", read(os.path.join(self.pristine, "lib/Makefile")))

    def test_second_overlay_rewrites_nothing(self):
        self.overlay()
        mtime = os.stat(os.path.join(self.tree, "lib/Makefile")).st_mtime_ns
        changed, _ = self.overlay()
        self.assertEqual(changed, [])
        self.assertEqual(os.stat(os.path.join(self.tree, "lib/Makefile")).st_mtime_ns, mtime)

    def test_only_changed_file_is_rewritten(self):
        self.overlay()
        write(os.path.join(self.repo, "lib/buildid_rust.rs"), "// Rust v2\n")
        changed, _ = self.overlay()
        self.assertEqual(changed, ["lib/buildid_rust.rs"])

    def test_removed_overlay_file_is_restored_or_deleted(self):
        self.overlay()
        write(os.path.join(self.patches, "0001-lib-build.patch"),
              "lib: add a comment\n\nSo that the series adds something.\n---\n"
              "--- a/lib/buildid.c\n+++ b/lib/buildid.c\n@@ -1 +1,2 @@\n /* C */\n+/* more */\n")
        self.write_series(["0001-lib-build.patch"])
        os.unlink(os.path.join(self.repo, "lib/buildid_rust.rs"))
        changed, _ = self.overlay()
        self.assertEqual(changed, ["lib/buildid.c", "lib/Makefile", "lib/buildid_rust.rs"])
        self.assertEqual(read(os.path.join(self.tree, "lib/Makefile")),
                         read(os.path.join(self.pristine, "lib/Makefile")))
        self.assertFalse(os.path.exists(os.path.join(self.tree, "lib/buildid_rust.rs")))

    def test_patch_that_does_not_apply_names_patch_and_file(self):
        write(os.path.join(self.patches, "0002-stale.patch"),
              PATCH.replace("obj-y += c.o", "obj-y += zzz.o"))
        self.write_series(["0001-lib-build.patch", "\tlib/buildid_rust.rs", "0002-stale.patch"])
        with self.assertRaises(HarnessError) as cm:
            self.overlay()
        msg = str(cm.exception)
        self.assertIn("patches/0002-stale.patch does not apply", msg)
        self.assertIn("lib/Makefile", msg)

    def test_patch_for_missing_file_names_it(self):
        write(os.path.join(self.patches, "0002-missing.patch"),
              PATCH.replace("lib/Makefile", "lib/Nope"))
        self.write_series(["0001-lib-build.patch", "\tlib/buildid_rust.rs", "0002-missing.patch"])
        with self.assertRaises(HarnessError) as cm:
            self.overlay()
        self.assertIn("0002-missing.patch diffs lib/Nope, which the pristine tree does not have",
                      str(cm.exception))


class ManifestTest(unittest.TestCase):
    def test_detects_truncated_and_missing_files(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "t/a"), "aaaa")
            write(os.path.join(d, "t/b/c"), "cc")
            m = os.path.join(d, "manifest")
            tree.write_manifest(os.path.join(d, "t"), m)
            self.assertTrue(tree.verify_manifest(os.path.join(d, "t"), m)[0])
            # New files (in-tree tool builds) are not damage.
            write(os.path.join(d, "t/new"), "x")
            self.assertTrue(tree.verify_manifest(os.path.join(d, "t"), m)[0])
            with open(os.path.join(d, "t/a"), "w") as f:
                f.write("a")
            ok, why = tree.verify_manifest(os.path.join(d, "t"), m)
            self.assertFalse(ok)
            self.assertIn("a\t1\t", why[0])
            os.unlink(os.path.join(d, "t/b/c"))
            ok, why = tree.verify_manifest(os.path.join(d, "t"), m)
            self.assertIn("b/c\tMISSING", "\n".join(why))

    def test_missing_manifest_means_incomplete(self):
        with tempfile.TemporaryDirectory() as d:
            ok, why = tree.verify_manifest(d, os.path.join(d, "nope"))
            self.assertFalse(ok)
            self.assertIn("incomplete", why[0])


if __name__ == "__main__":
    unittest.main()
