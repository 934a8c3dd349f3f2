# SPDX-License-Identifier: GPL-2.0
"""merge_fragments(): how an override fragment changes the base one."""

import os
import tempfile
import unittest

from kharness.kbuild import merge_fragments


class MergeFragmentsTest(unittest.TestCase):
    def merge(self, base, overrides):
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, name) for name in ("base", "overrides", "out")]
            for path, text in zip(paths, (base, overrides)):
                with open(path, "w") as f:
                    f.write(text)
            merge_fragments(*paths)
            with open(paths[2]) as f:
                return [line for line in f.read().splitlines() if not line.startswith("# From")]

    def test_override_replaces_and_adds(self):
        self.assertEqual(self.merge("CONFIG_A=y\nCONFIG_B=y\n", "CONFIG_B=n\nCONFIG_C=y\n"),
                         ["CONFIG_A=y", "CONFIG_B=n", "CONFIG_C=y"])

    def test_not_set_only_takes_the_base_value_out(self):
        # Written out, "is not set" is the value n, which kconfig rejects for an int.
        merged = self.merge("CONFIG_HUNG=y\nCONFIG_HUNG_TIMEOUT=120\n",
                            "CONFIG_HUNG=n\n# CONFIG_HUNG_TIMEOUT is not set\n")
        self.assertEqual(merged, ["CONFIG_HUNG=n"])


if __name__ == "__main__":
    unittest.main()
