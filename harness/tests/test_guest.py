# SPDX-License-Identifier: GPL-2.0
"""private_copies(): what the kselftest stage's tool checks run from."""

import os
import stat
import tempfile
import unittest

from kharness.guest import private_copies


class PrivateCopiesTest(unittest.TestCase):
    def test_copies_below_a_directory_only_its_owner_searches(self):
        with tempfile.TemporaryDirectory() as d:
            tool = os.path.join(d, "tool")
            with open(tool, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(tool, 0o755)
            parent = os.path.join(d, "run")
            os.makedirs(parent)
            (copy,) = private_copies([tool], parent)
            self.assertEqual(os.path.dirname(copy), os.path.join(parent, "private"))
            self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(copy)).st_mode), 0o700)
            self.assertEqual(stat.S_IMODE(os.stat(copy).st_mode), 0o755)
            with open(copy) as f:
                self.assertEqual(f.read(), "#!/bin/sh\n")

    def test_a_second_run_leaves_nothing_of_the_first(self):
        with tempfile.TemporaryDirectory() as d:
            first, second = os.path.join(d, "first"), os.path.join(d, "second")
            for path in (first, second):
                with open(path, "w") as f:
                    f.write(path)
            private_copies([first], d)
            (copy,) = private_copies([second], d)
            self.assertEqual(os.listdir(os.path.dirname(copy)), ["second"])


if __name__ == "__main__":
    unittest.main()
