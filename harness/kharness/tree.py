# SPDX-License-Identifier: GPL-2.0
"""Kernel source cache: pristine extraction, working tree, project overlay.

The pristine tree is the Debian tarball extracted once per package version.
The working tree is a copy of it with the patch series (patches/series,
see series.py) applied: the generated patches, by 'git apply'.  Both carry a manifest (path, size, mtime)
that is written only once they are complete, so an interrupted extraction or
a tree changed behind our back is noticed and rebuilt instead of trusted.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

from . import series
from .common import CACHE, REPO, HarnessError, info, run

TARBALL_GLOB = re.compile(r"^linux-source-6\.12\.tar\.(xz|bz2|gz)$")
PACKAGE = "linux-source-6.12"

# Top-level directories of the repository that mirror the kernel tree.  The
# rest (Makefile, harness/, patches/, .ci/, the host Cargo workspace files)
# drives the build and is never copied into the kernel tree.
KERNEL_DIRS = (
    "Documentation",
    "arch",
    "fs",
    "include",
    "init",
    "kernel",
    "lib",
    "mm",
    "rust",
    "samples",
    "scripts",
    "tools",
)

# Paths under KERNEL_DIRS that are host build output, not sources.
SKIP_PARTS = ("target",)


def find_tarball():
    for d in ("/usr/src",):
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if TARBALL_GLOB.match(name):
                return os.path.join(d, name)
    raise HarnessError(
        f"no {PACKAGE} tarball in /usr/src: run 'make deps' (apt-get install {PACKAGE})"
    )


def package_version():
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", PACKAGE],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    if not out:
        raise HarnessError(f"package {PACKAGE} is not installed: run 'make deps'")
    return out


def kernel_version(tree):
    fields = {}
    with open(os.path.join(tree, "Makefile")) as f:
        for line in f:
            m = re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)", line)
            if m:
                fields[m.group(1)] = m.group(2)
            if len(fields) == 4:
                break
    return "{VERSION}.{PATCHLEVEL}.{SUBLEVEL}{EXTRAVERSION}".format(**fields)


def safe_key(text):
    return re.sub(r"[^A-Za-z0-9.+-]", "_", text)


def manifest_lines(root, paths=None):
    """Return sorted 'path<TAB>size<TAB>mtime_ns' lines for files under root.

    With paths given, only those are listed (missing ones as 'MISSING').
    """
    lines = []
    if paths is None:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            for name in filenames:
                p = name if rel == "." else os.path.join(rel, name)
                st = os.lstat(os.path.join(dirpath, name))
                lines.append(f"{p}\t{st.st_size}\t{st.st_mtime_ns}")
    else:
        for p in paths:
            try:
                st = os.lstat(os.path.join(root, p))
                lines.append(f"{p}\t{st.st_size}\t{st.st_mtime_ns}")
            except FileNotFoundError:
                lines.append(f"{p}\tMISSING")
    lines.sort()
    return lines


def verify_manifest(root, manifest_file):
    """True if every file recorded in manifest_file is unchanged under root.

    Files that appeared since (e.g. in-tree tool builds) are not an error.
    """
    try:
        with open(manifest_file) as f:
            recorded = f.read().splitlines()
    except FileNotFoundError:
        return False, ["no manifest (incomplete or interrupted)"]
    if not recorded:
        return False, ["empty manifest"]
    paths = [line.split("\t", 1)[0] for line in recorded]
    current = manifest_lines(root, paths)
    bad = [c for r, c in zip(sorted(recorded), current) if r != c]
    return not bad, bad[:5]


def write_manifest(root, manifest_file):
    lines = manifest_lines(root)
    tmp = manifest_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, manifest_file)
    return len(lines)


class Source:
    """Pristine extraction and working tree for one package version."""

    def __init__(self):
        self.tarball = find_tarball()
        self.pkgver = package_version()
        key = safe_key(self.pkgver)
        self.src_base = os.path.join(CACHE, "src", key)
        self.pristine = os.path.join(self.src_base, "linux")
        self.pristine_manifest = os.path.join(self.src_base, "manifest")
        self.pristine_stamp = os.path.join(self.src_base, "stamp.json")
        self.key = key
        self.use_work_base("")

    def use_work_base(self, suffix):
        """Keep the working tree in tree/<key><suffix> (a second tree has a suffix)."""
        self.work_base = os.path.join(CACHE, "tree", self.key + suffix)
        self.tree = os.path.join(self.work_base, "linux")
        self.tree_manifest = os.path.join(self.work_base, "manifest")
        self.overlay_state = os.path.join(self.work_base, "overlay.json")

    def tarball_id(self):
        st = os.stat(self.tarball)
        return {"tarball": self.tarball, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                "package_version": self.pkgver}

    def c_reference(self):
        """The tree's lib/buildid.c, which the host tests compile as the reference.

        It is 6.12's file with the series' fixes to it: the behaviour the Rust
        port must match.
        """
        self.overlay()
        return os.path.join(self.tree, "lib", "buildid.c")

    # -- pristine -----------------------------------------------------------
    def ensure_pristine(self):
        ok = False
        try:
            with open(self.pristine_stamp) as f:
                ok = json.load(f) == self.tarball_id()
        except (OSError, ValueError):
            ok = False
        if ok:
            ok, why = verify_manifest(self.pristine, self.pristine_manifest)
            if not ok:
                info(f"pristine source cache is damaged ({'; '.join(why)}), extracting again")
        if ok:
            return False
        shutil.rmtree(self.src_base, ignore_errors=True)
        os.makedirs(self.src_base)
        staging = os.path.join(self.src_base, "extract.tmp")
        os.makedirs(staging)
        info(f"extracting {self.tarball} ({self.pkgver})")
        run(["tar", "-xf", self.tarball, "-C", staging], progress="extracting")
        entries = os.listdir(staging)
        if len(entries) != 1:
            raise HarnessError(f"unexpected tarball layout: {entries}")
        os.rename(os.path.join(staging, entries[0]), self.pristine)
        os.rmdir(staging)
        n = write_manifest(self.pristine, self.pristine_manifest)
        with open(self.pristine_stamp, "w") as f:
            json.dump(self.tarball_id(), f)
        info(f"extracted {n} files")
        return True

    # -- working tree --------------------------------------------------------
    def ensure_tree(self):
        """Make the working tree a verified copy of pristine + overlay state."""
        fresh = self.ensure_pristine()
        ok = not fresh and os.path.isdir(self.tree)
        if ok:
            ok, why = verify_manifest(self.tree, self.tree_manifest)
            if not ok:
                info(f"working tree cache is damaged ({'; '.join(why)}), copying again")
        if ok:
            return False
        shutil.rmtree(self.work_base, ignore_errors=True)
        os.makedirs(self.work_base)
        info("copying pristine source to the working tree")
        run(["cp", "-a", self.pristine, self.tree + ".tmp"], progress="copying")
        os.rename(self.tree + ".tmp", self.tree)
        write_manifest(self.tree, self.tree_manifest)
        return True

    def generated_series(self):
        """Where the harness keeps the patches it generates for the build."""
        return os.path.join(CACHE, "series", self.key)

    def staged(self, repo=REPO):
        """{path: (bytes, mode)}: what the series makes of the files it touches."""
        return stage_series(self.pristine, repo, self.generated_series())

    def overlay(self, repo=REPO):
        """Apply the series; rewrite only files whose content changed.

        Returns (changed paths, whether the working tree was recreated).
        """
        recreated = self.ensure_tree()
        staged = self.staged(repo)
        try:
            with open(self.overlay_state) as f:
                previous = json.load(f)
        except (OSError, ValueError):
            previous = {}
        changed = sync_files(self.tree, self.pristine, staged,
                             sorted(staged) + sorted(set(previous) - set(staged)))
        state = {rel: hashlib.sha256(d).hexdigest() for rel, (d, _m) in staged.items()}
        if changed or recreated or state != previous:
            write_manifest(self.tree, self.tree_manifest)
            tmp = self.overlay_state + ".tmp"
            with open(tmp, "w") as f:
                json.dump(state, f, indent=0, sort_keys=True)
            os.replace(tmp, self.overlay_state)
        return changed, recreated


def sync_files(tree, pristine, state, paths):
    """Make each of paths in tree what state holds, else pristine's (or absent).

    Only files whose content or mode differ are written, so that make
    rebuilds only what depends on them; returns those paths, in order.
    """
    changed = []
    for rel in paths:
        dst = os.path.join(tree, rel)
        if rel in state:
            data, mode = state[rel]
        else:
            src = os.path.join(pristine, rel)
            if not os.path.exists(src):
                if os.path.exists(dst):
                    os.unlink(dst)
                    changed.append(rel)
                continue
            with open(src, "rb") as f:
                data = f.read()
            mode = os.stat(src).st_mode & 0o777
        if not file_has(dst, data, mode):
            atomic_write(dst, data, mode)
            changed.append(rel)
    return changed


def file_has(path, data, mode):
    try:
        st = os.stat(path)
        if st.st_size != len(data) or (st.st_mode & 0o777) != mode:
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except FileNotFoundError:
        return False


def atomic_write(path, data, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".overlay.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def project_files(repo):
    """Files of the repository that land in the kernel tree."""
    dirs = [d for d in KERNEL_DIRS if os.path.isdir(os.path.join(repo, d))]
    if not dirs:
        return []
    if os.path.isdir(os.path.join(repo, ".git")):
        proc = subprocess.run(
            ["git", "-C", repo, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--"] + dirs, capture_output=True)
        if proc.returncode:
            raise HarnessError(f"git ls-files in {repo} failed: "
                               f"{proc.stderr.decode(errors='replace').strip()}")
        out = proc.stdout.decode()
        files = [p for p in out.split("\0") if p]
    else:
        files = []
        for d in dirs:
            for dirpath, _dn, filenames in os.walk(os.path.join(repo, d)):
                for name in filenames:
                    files.append(os.path.relpath(os.path.join(dirpath, name), repo))
    return sorted(p for p in files
                  if not any(part in SKIP_PARTS for part in p.split("/"))
                  and os.path.isfile(os.path.join(repo, p)))


def stage_series(pristine, repo, out_dir, parts=None):
    """{path: (bytes, mode)} of every file the series changes, from its generated patches.

    With parts, only the first that many series of patches/series are applied.
    """
    entries = series.load(repo, project_files(repo))
    _covers, patches, final = series.generate(entries, pristine, out_dir, repo)
    if parts is not None:
        count = sum(part.count for part in entries.parts[:parts])
        return series.apply_generated(patches[:count], pristine, entries.touched())
    staged = series.apply_generated(patches, pristine, entries.touched())
    if staged != final:
        differ = sorted(p for p in set(staged) | set(final) if staged.get(p) != final.get(p))
        raise HarnessError("the generated patches do not give the series' files: "
                           + ", ".join(differ))
    return staged
