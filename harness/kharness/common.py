# SPDX-License-Identifier: GPL-2.0
"""Paths, the pinned tool environment and process helpers shared by the harness."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS = os.path.join(REPO, "harness")
CACHE = os.environ.get("BUILDID_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "rust-buildid")

# What harness/install-deps.sh installs, and nothing else: bindgen-cli in
# TOOLS, virtme-ng in VENV, Debian packages in the system directories.
TOOLS = os.path.join(CACHE, "tools")
VENV = os.path.join(CACHE, "venv")
SYSTEM_PATH = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
TOOL_PATH = ":".join([os.path.join(TOOLS, "bin"), os.path.join(VENV, "bin")] + SYSTEM_PATH)
BINDGEN = os.path.join(TOOLS, "bin", "bindgen")
VNG = os.path.join(VENV, "bin", "vng")
CARGO = "/usr/bin/cargo"
CARGO_HOME = os.path.join(CACHE, "cargo")
RUSTC = "/usr/bin/rustc"
PYTHON = "/usr/bin/python3"

# Variables of the calling shell that would select other toolchains or
# change how they behave (rustup overrides, a user's cargo target, ...).
DROPPED_VARIABLES = re.compile(r"^(RUSTUP_\w+|RUSTC\w*|RUSTDOC\w*|RUSTFLAGS|CARGO_\w+|"
                               r"PYTHON\w*|VIRTUAL_ENV|PYENV\w*|CC|CXX|LD|LLVM|CFLAGS|"
                               r"LDFLAGS|ARCH|CROSS_COMPILE|KBUILD_\w+|MAKEFLAGS|MFLAGS|"
                               r"K[A-Z]*FLAGS|HOST\w*FLAGS|LIBCLANG_PATH|CLANG_PATH|"
                               r"BINDGEN_\w+|LD_LIBRARY_PATH|LD_PRELOAD|GIT_\w+)$")


class HarnessError(Exception):
    """An error that ends the harness with one clear message."""


def info(msg):
    print(f"[harness] {msg}", file=sys.stderr, flush=True)


def pin_environment(environ=None):
    """Restrict PATH and the toolchain variables to what install-deps.sh provides.

    Called once at start, so that every program the harness starts (and
    what those start: vng starts virtme-run, qemu, busybox) resolves to a
    pinned copy, on any machine.
    """
    environ = os.environ if environ is None else environ
    for name in [n for n in environ if DROPPED_VARIABLES.match(n)]:
        del environ[name]
    environ["PATH"] = TOOL_PATH
    environ["PYTHONPATH"] = os.path.join(REPO, "harness")
    environ["RUSTC"] = RUSTC
    # bindgen's libclang: the one of clang-19, not whichever clang-sys finds.
    environ["LIBCLANG_PATH"] = "/usr/lib/llvm-19/lib"
    # The clang that builds BPF objects (tools/buildid's build.rs reads it).
    environ["CLANG"] = "clang-19"
    # Our own cargo home: crates downloaded for the host crates and
    # bindgen-cli, and no cargo subcommands from ~/.cargo/bin (cargo looks
    # there before PATH).
    environ["CARGO_HOME"] = CARGO_HOME
    environ["LC_ALL"] = "C.UTF-8"
    return environ


def check_pinned_tools():
    """Refuse to go on with a tool that is not the one install-deps.sh installed."""
    problems = []
    if not os.access(BINDGEN, os.X_OK):
        problems.append(f"{BINDGEN} missing")
    if not os.access(VNG, os.X_OK):
        problems.append(f"{VNG} missing")
    for prog, want in [("vng", VNG), ("virtme-run", os.path.join(VENV, "bin", "virtme-run")),
                       ("bindgen", BINDGEN), ("cargo", CARGO), ("rustc", RUSTC)]:
        found = shutil.which(prog, path=TOOL_PATH)
        if found != want:
            problems.append(f"{prog} resolves to {found}, not {want}")
    if problems:
        raise HarnessError("the pinned tools are not in place (run 'make deps'):\n  "
                           + "\n  ".join(problems))


PROGRESS_SECONDS = 30


class Progress:
    """Prints a line every PROGRESS_SECONDS while a long step runs, output or not."""

    def __init__(self, what):
        self.what = what
        self.steps = 0
        self.last = ""
        self.t0 = time.monotonic()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def step(self, line):
        self.steps += 1
        self.last = line.strip()

    def _loop(self):
        while not self.done.wait(PROGRESS_SECONDS):
            counted = f"{self.steps} steps in " if self.steps else ""
            info(f"{self.what}: {counted}{time.monotonic() - self.t0:.0f} s"
                 + (f", last: {self.last}" if self.last else ""))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.done.set()
        self.thread.join()


def run(cmd, progress=None, **kwargs):
    """Run cmd, raising HarnessError naming it on failure.

    progress names a step that may take long: it then prints a line every
    PROGRESS_SECONDS until cmd ends.
    """
    try:
        with Progress(progress) if progress else contextlib.nullcontext():
            return subprocess.run(cmd, check=True, **kwargs)
    except FileNotFoundError as e:
        raise HarnessError(f"{cmd[0]}: not found ({e})") from e
    except subprocess.CalledProcessError as e:
        raise HarnessError(f"command failed with status {e.returncode}: {' '.join(cmd)}") from e


def stream(cmd, what, step=None, drop=None, quiet=False, **kwargs):
    """Run cmd, copying its output to ours as it comes; (status, output, steps).

    what names the step for the progress line printed every
    PROGRESS_SECONDS.  Lines matching step are counted for that line
    instead of being copied (kbuild's "  CC  file.o"), lines matching drop
    are left out; output holds the lines that were copied.  With quiet,
    they are kept in output but not printed.
    """
    lines = []
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", **kwargs)
    except FileNotFoundError as e:
        raise HarnessError(f"{cmd[0]}: not found ({e})") from e
    with Progress(what) as progress:
        for line in proc.stdout:
            if step and step.match(line):
                progress.step(line)
                continue
            if drop and drop.match(line):
                continue
            if not quiet:
                sys.stdout.write(line)
                sys.stdout.flush()
            lines.append(line)
    return proc.wait(), "".join(lines), progress.steps
