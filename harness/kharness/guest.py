# SPDX-License-Identifier: GPL-2.0
"""What the host builds for the guest to run, and how the host crates are built.

'make test' (stages.py), 'make mutants' (mutants.py) and 'make bench'
(bench.py) all boot the guest with these programs, and 'make fuzz' (cli.py)
runs the same fuzzer as the host stage.  They live here, in a module that
imports nothing of the harness but common.py, so that those modules need
not import one another for them: stages.py imports mutants.py (the host
stage runs its host checks), and an import back would be a loop.
"""

import os
import shlex
import shutil
import subprocess

from .common import CACHE, CARGO, HARNESS, REPO, run

TARGET_DIR = os.path.join(REPO, "target")
# The clang that builds BPF objects, the buildid kselftests' ones included.
BPF_CLANG = "clang-19"


def cargo_env(c_source=None):
    """The environment of a cargo run over the workspace.

    c_source is the lib/buildid.c that buildid-elf's build.rs compiles as
    the C reference (BUILDID_C_SOURCE).  It is given to the cargo runs that
    build that crate, not set in the harness' own environment, where every
    program of the later stages would inherit it.
    """
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", TARGET_DIR)
    if c_source is not None:
        env["BUILDID_C_SOURCE"] = c_source
    return env


def fuzz_command(seconds, quiet=False):
    """The differential fuzzing of the parser against lib/buildid.c, for seconds.

    'make fuzz' runs it long, the host stage of 'make test' briefly and
    quietly; both with BUILDID_C_SOURCE set to the tree's lib/buildid.c.
    """
    return ([CARGO, "run"] + (["-q"] if quiet else []) +
            ["--release", "-p", "buildid-elf", "--bin", "buildid-elf-fuzz",
             "--", "--seconds", str(seconds)])


def build_tool():
    """The user-space buildid tool, as `make run` uses it."""
    run([CARGO, "build", "--release", "-q", "-p", "buildid"], cwd=REPO, env=cargo_env(),
        progress="building the buildid tool")
    return os.path.join(TARGET_DIR, "release", "buildid")


def private_copies(paths, parent):
    """Copies of paths in parent/private, a directory of mode 0700; their paths.

    README tells users to run the project as root, and a clone in root's
    home (mode 0700) is where they put it: a guest check that runs a
    program as another user must not run it where it was built.  The
    kselftest stage runs its tool checks from these copies, wherever the
    checkout is, so that every run covers that case.
    """
    private = os.path.join(parent, "private")
    shutil.rmtree(private, ignore_errors=True)
    os.makedirs(private)
    os.chmod(private, 0o700)
    copies = []
    for path in paths:
        copy = os.path.join(private, os.path.basename(path))
        shutil.copy2(path, copy)
        copies.append(copy)
    return copies


def guest_programs():
    """Build the C helpers the guest scripts use; returns their directory."""
    bindir = os.path.join(CACHE, "guest-bin")
    os.makedirs(bindir, exist_ok=True)
    src_dir = os.path.join(HARNESS, "guest")
    for name in sorted(os.listdir(src_dir)):
        if not name.endswith(".c"):
            continue
        src, exe = os.path.join(src_dir, name), os.path.join(bindir, name[:-2])
        if not os.path.exists(exe) or os.stat(exe).st_mtime < os.stat(src).st_mtime:
            run(["gcc", "-O2", "-Wall", "-Werror", "-o", exe, src])
    return bindir


def kunit_guest_command():
    """The guest command that loads the buildid_kunit module (harness/guest/kunit.sh)."""
    bindir = guest_programs()
    script = os.path.join(HARNESS, "guest", "kunit.sh")
    return f"BUILDID_GUEST_BIN={shlex.quote(bindir)} sh {shlex.quote(script)}"


def build_buildid_kselftests(kernel):
    """Install the kernel's headers, build the buildid suite where the guest's make looks."""
    kernel.make("headers")
    run(["make", "-s", "-C", os.path.join(kernel.source.tree, "tools", "testing", "selftests"),
         "TARGETS=buildid", f"O={kernel.build}", f"CLANG={BPF_CLANG}"],
        stdout=subprocess.DEVNULL, progress="building the buildid kselftests")
