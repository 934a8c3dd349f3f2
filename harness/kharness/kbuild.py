# SPDX-License-Identifier: GPL-2.0
"""Kernel configuration and incremental build in the cache."""

import filecmp
import hashlib
import os
import re
import shutil
import time

from .common import BINDGEN, CACHE, PROGRESS_SECONDS, REPO, HarnessError, info, run, stream
from .tree import Source, kernel_version, project_files

# BUILDID_FRAGMENT selects another fragment, e.g. to build with the option off.
FRAGMENT = os.environ.get("BUILDID_FRAGMENT") or os.path.join(
    REPO, "kernel", "configs", "buildid.config")
BENCH_FRAGMENT = os.path.join(REPO, "kernel", "configs", "buildid-bench.config")
BASE_CONFIG = "allnoconfig"

# Every unsafe block and unsafe impl needs a "// SAFETY:" comment: clippy
# checks it as it compiles each Rust object (CLIPPY=1), with the lint that
# Linux 6.12's rust_common_flags turn on; the lint stage checks that each
# object of ours was compiled that way.
UNSAFE_LINT = "-Wclippy::undocumented_unsafe_blocks"


def toolchain_vars():
    return [
        "LLVM=-19",
        "RUSTC=/usr/bin/rustc",
        "HOSTRUSTC=/usr/bin/rustc",
        "RUSTDOC=/usr/bin/rustdoc",
        f"BINDGEN={BINDGEN}",
        # clippy-driver is rustc plus lints, so every Rust object is linted as
        # it is built; it must be the one matching /usr/bin/rustc.
        "CLIPPY=1",
        "CLIPPY_DRIVER=/usr/bin/clippy-driver",
    ]


def jobs():
    return str((os.cpu_count() or 1) + 1)


def parse_fragment(path):
    """Return [(symbol, wanted value or 'n')] from a config fragment."""
    wanted = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            m = re.match(r"^# (CONFIG_\w+) is not set$", line)
            if m:
                wanted.append((m.group(1), "n"))
                continue
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
            if not m:
                raise HarnessError(f"{path}:{lineno}: not a config line: {line}")
            wanted.append((m.group(1), m.group(2)))
    return wanted


def parse_config(path):
    values = {}
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
            if m:
                values[m.group(1)] = m.group(2)
    return values


def merge_fragments(base, overrides, out):
    """Write base with the options of overrides replacing (or adding to) its own.

    "# CONFIG_X is not set" in overrides only takes X out of base, leaving it to Kconfig's
    default: written out, it would be the value n, which an int or string symbol (one that
    a disabled option hides) rejects with a warning.  "CONFIG_X=n" turns a bool off."""
    override_lines = {}
    with open(overrides) as f:
        for raw in f:
            m = re.match(r"^(?:# )?(CONFIG_\w+)[= ]", raw.strip())
            if m:
                line = raw.rstrip("\n")
                override_lines[m.group(1)] = None if line.startswith("#") else line
    lines = []
    with open(base) as f:
        for raw in f:
            m = re.match(r"^(?:# )?(CONFIG_\w+)[= ]", raw.strip())
            if not (m and m.group(1) in override_lines):
                lines.append(raw.rstrip("\n"))
    lines.append(f"# From {os.path.relpath(overrides, REPO)}:")
    lines += [line for line in override_lines.values() if line is not None]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return out


def check_config(fragment, config):
    """Names of fragment options whose value did not take, with the value found."""
    have = parse_config(config)
    bad = []
    for sym, want in parse_fragment(fragment):
        got = have.get(sym, "n")
        if got != want:
            bad.append(f"{sym}={want} (got {'not set' if got == 'n' else got})")
    return bad


# pahole 1.24 does not know some DWARF 5 tags that clang 19 and rustc emit; it
# skips them, and BTF is still complete for what BPF needs.
PAHOLE_NOISE = re.compile(r"^(die__\w+|tag__recode_dwarf_type|\w+__\w+): .*(not handled|not supported|"
                          r"couldn't find name)")

# kbuild's one-line summary of a build step ("  CC      mm/filemap.o",
# "  RUSTC L rust/core.o"); counted for the progress line, not printed.
KBUILD_STEP = re.compile(r"^  [A-Z][A-Z0-9_-]*(?: [A-Z]+)?\s+\S+$")
MAKE_DIRECTORY = re.compile(r"^make(\[\d+\])?: (Entering|Leaving) directory")
BUILD_NOISE = re.compile(f"{PAHOLE_NOISE.pattern}|{MAKE_DIRECTORY.pattern}")


C_DIAG = re.compile(r"^(\S+\.[ch]):\d+:\d+: (?:warning|error)")
RUST_DIAG = re.compile(r"^\s*--> (\S+\.rs):(\d+)")


def own_path(path, ours):
    """The project-relative path of a diagnostic's file, or None if not ours."""
    parts = path.split("/")
    for i in range(len(parts)):
        rel = "/".join(parts[i:])
        if rel in ours:
            return rel
    return None


def rust_object(rel):
    """The object a Rust source file is compiled into."""
    parts = rel.split("/")
    if parts[:2] == ["rust", "kernel"]:
        return "rust/kernel.o"
    # The Rust lib/buildid is one crate, whose root is buildid_rust.rs.
    if parts[:2] == ["lib", "buildid"]:
        return "lib/buildid/buildid_rust.o"
    return rel[:-3] + ".o"


def project_warnings(lines, extra=()):
    """(diagnostic, object) for warnings and errors located in the project's files.

    A Rust diagnostic (rustc's or clippy's) is its first line followed by
    " --> FILE:LINE:COLUMN"; it is reported as "FILE:LINE: first line".
    extra names more files to count as ours (series-check: every file the
    series changes).
    """
    ours = set(project_files(REPO)) | set(extra)
    found = []
    for i, line in enumerate(lines):
        m = C_DIAG.match(line)
        rel = m and own_path(m.group(1), ours)
        if rel:
            found.append((line.strip(), rel[:-2] + ".o"))
            continue
        m = RUST_DIAG.match(line)
        rel = m and own_path(m.group(1), ours)
        if rel:
            head = next((lines[j].strip() for j in range(i - 1, max(i - 4, -1), -1)
                         if re.match(r"^(warning|error)", lines[j])), "warning")
            found.append((f"{rel}:{m.group(2)}: {head}", rust_object(rel)))
    return found


class Kernel:
    """A configured build directory for the current source and fragment."""

    def __init__(self, fragment=FRAGMENT, flavor=None):
        """flavor names a second build directory, e.g. "bench" for its own config."""
        self.source = Source()
        self.fragment = fragment
        with open(fragment, "rb") as f:
            self.fragment_hash = hashlib.sha256(BASE_CONFIG.encode() + b"\0" + f.read()).hexdigest()
        # One build directory per kernel source: kbuild's tools (objtool,
        # resolve_btfids) record absolute output paths, so a directory per
        # fragment would rebuild everything on each fragment change, while
        # in place kbuild rebuilds just the objects that use changed options.
        # The config itself is regenerated from the fragment on every build.
        self.build = os.path.join(CACHE, "build", self.source.key)
        # Files besides the project's whose warnings fail the build.
        self.own_extra = ()
        if flavor:
            self.build += f"-{flavor}"

    def make_cmd(self, *targets, out=None, extra=(), silent=True):
        return ["make"] + (["-s"] if silent else []) + ["-C", self.source.tree, f"O={out or self.build}",
                f"-j{jobs()}"] + toolchain_vars() + list(extra) + list(targets)

    def make(self, *targets, out=None, extra=()):
        run(self.make_cmd(*targets, out=out, extra=extra))

    def prepare_tree(self):
        changed, recreated = self.source.overlay()
        kver = self.kernel_version()
        info(f"kernel source: {self.source.tarball} from Debian package "
             f"linux-source-6.12 {self.source.pkgver} (Linux {kver})")
        if recreated:
            info("working tree was (re)created")
        if changed:
            info(f"overlay rewrote {len(changed)} file(s): "
                 + ", ".join(changed[:8]) + (" ..." if len(changed) > 8 else ""))
        if recreated and os.path.isdir(self.build):
            # Restored files carry the tarball's old mtimes, so make would not
            # notice that objects built from a damaged tree are stale.
            info("dropping build output made from the previous tree")
            shutil.rmtree(self.build)
        return kver

    def prepare(self):
        """Lay the overlay on the source and install the .config: ready to build."""
        self.prepare_tree()
        self.configure()
        return self

    def kernel_version(self):
        return kernel_version(self.source.tree)

    def configure(self, tolerate=()):
        """Generate .config in a scratch dir; install it only if it changed.

        tolerate names symbols of the fragment that may fail to take (the
        series-check builds trees that do not define them yet).
        """
        scratch = os.path.join(CACHE, "build", "kconfig-scratch")
        os.makedirs(scratch, exist_ok=True)
        os.makedirs(self.build, exist_ok=True)
        for name in (".config", ".config.old"):
            if os.path.exists(os.path.join(scratch, name)):
                os.unlink(os.path.join(scratch, name))
        self.make(BASE_CONFIG, out=scratch, extra=[f"KCONFIG_ALLCONFIG={self.fragment}"])
        self.make("olddefconfig", out=scratch)
        new = os.path.join(scratch, ".config")
        bad = [b for b in check_config(self.fragment, new)
               if b.split("=", 1)[0].split(" ", 1)[0] not in tolerate]
        if bad:
            raise HarnessError(
                f"config options from {os.path.relpath(self.fragment, REPO)} did not take "
                "(unmet dependency or unknown option):\n  " + "\n  ".join(bad))
        cur = os.path.join(self.build, ".config")
        if not os.path.exists(cur) or not filecmp.cmp(new, cur, shallow=False):
            shutil.copyfile(new, cur)
            info(f"installed new .config in {self.build}")
        with open(os.path.join(self.build, "fragment.sha256"), "w") as f:
            f.write(self.fragment_hash + "\n")

    def build_all(self):
        t0 = time.monotonic()
        info(f"building the kernel in {self.build} (progress every {PROGRESS_SECONDS} s)")
        status, output, steps = stream(self.make_cmd("all", silent=False), "kernel build",
                                       step=KBUILD_STEP, drop=BUILD_NOISE)
        problems = project_warnings(output.splitlines(keepends=True), self.own_extra)
        for obj in {o for _, o in problems}:
            # Make the warning come back on the next build instead of vanishing
            # with an up-to-date object: an object of the project that is
            # there was built without any (the lint stage counts on it).
            path = os.path.join(self.build, obj)
            if os.path.exists(path):
                os.unlink(path)
        if status != 0:
            raise HarnessError(f"kernel build failed (make exited {status})")
        if problems:
            raise HarnessError("compiler or clippy warnings in project files:\n  "
                               + "\n  ".join(sorted({w for w, _ in problems})))
        dt = time.monotonic() - t0
        info(f"kernel build finished in {dt:.0f} s ({steps} steps): {self.bzimage()}")
        return dt

    def bzimage(self):
        return os.path.join(self.build, "arch", "x86", "boot", "bzImage")


def build_kernel(kernel=None):
    """The one way to a built kernel: overlay, .config, 'make all' (checked for warnings).

    kernel defaults to the test kernel of the current source and fragment.
    """
    kernel = (kernel or Kernel()).prepare()
    kernel.build_all()
    return kernel
