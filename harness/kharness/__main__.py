# SPDX-License-Identifier: GPL-2.0
"""Entry point: python3 -m kharness COMMAND (run from harness/)."""

import sys

from .cli import main
from .common import pin_environment

pin_environment()
sys.exit(main(sys.argv[1:]))
