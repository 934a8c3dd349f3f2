# SPDX-License-Identifier: GPL-2.0
"""Entry point: python3 -m kharness COMMAND (run from harness/)."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
