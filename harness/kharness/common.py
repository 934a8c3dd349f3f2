# SPDX-License-Identifier: GPL-2.0
"""Paths and process helpers shared by the harness modules."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("BUILDID_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "rust-buildid")


class HarnessError(Exception):
    """An error that ends the harness with one clear message."""


def info(msg):
    print(f"[harness] {msg}", file=sys.stderr, flush=True)


def run(cmd, **kwargs):
    """Run cmd, raising HarnessError naming it on failure."""
    try:
        return subprocess.run(cmd, check=True, **kwargs)
    except FileNotFoundError as e:
        raise HarnessError(f"{cmd[0]}: not found ({e})") from e
    except subprocess.CalledProcessError as e:
        raise HarnessError(f"command failed with status {e.returncode}: {' '.join(cmd)}") from e
