# SPDX-License-Identifier: GPL-2.0
"""'make series', the cheap 'git am' check of 'make test', and 'make series-check'.

series-check is what a maintainer runs before taking the series: checkpatch
--strict on every patch, the tree after each patch built with the test
configuration in one incremental build directory, and the last tree built
with each of the project's main options off.
"""

import filecmp
import os
import re
import shutil
import subprocess
import tempfile
import time

from . import series
from .common import CACHE, REPO, HarnessError, info
from .kbuild import FRAGMENT, Kernel
from .tally import Tally, banner
from .tree import Source, project_files, sync_files, write_manifest

SERIES_OUT = os.environ.get("SERIES_OUT") or os.path.join(REPO, "out", "series")
ACCEPTED = os.path.join(REPO, "patches", "checkpatch-accepted")
# Options whose code the test configuration always builds; series-check
# also builds the final tree with each of them off, and with it what
# selects it (the sample driver selects the C reference).
OPTIONS_OFF = (("CONFIG_RUST_BUILDID",), ("CONFIG_BUILDID_CACHE",),
               ("CONFIG_BUILDID_C_REFERENCE", "CONFIG_SAMPLE_RUST_BUILDID"))
CHECKPATCH_LINE = re.compile(r"^(WARNING|ERROR|CHECK):(\w+):")


def generate(out_dir=SERIES_OUT, repo=REPO):
    """Write the series as git format-patch output; (cover letters, patch paths, series)."""
    source = Source()
    source.ensure_pristine()
    entries = series.load(repo, project_files(repo))
    covers, patches, _final = series.generate(entries, source.pristine, out_dir, repo, mail=True)
    # The base is the commit that pristine_repository() makes of the extracted tarball,
    # with a fixed author and date: anyone with the same tarball makes the same commit.
    base = series.git(["rev-parse", "pristine"], CACHE,
                      {"GIT_DIR": pristine_repository(source)}, text=True).strip()
    series.add_base_info(covers, patches, entries.parts, base)
    return covers, patches, entries, source


def cmd_series():
    covers, patches, entries, source = generate()
    info(f"wrote {len(entries.parts)} series of {len(patches)} patches in all to "
         f"{os.path.relpath(SERIES_OUT, REPO)}/, against Debian's linux-source-6.12 "
         f"{source.pkgver}, each applying on the one before it:")
    for part, cover in zip(entries.parts, covers):
        print(f"{os.path.relpath(os.path.dirname(cover), REPO)}/: {part.count} patches "
              f"[{part.prefix}] and a cover letter")
    return 0


# -- git am on a git repository of the pristine tree ---------------------------

def pristine_repository(source):
    """A bare git repository whose one commit is the pristine tree (made once, ~30 s)."""
    git_dir = os.path.join(CACHE, "series", source.key + ".pristine.git")
    stamp = os.path.join(git_dir, "buildid-pristine")
    want = repr(source.tarball_id())
    try:
        with open(stamp) as f:
            if f.read() == want:
                return git_dir
    except OSError:
        pass
    shutil.rmtree(git_dir, ignore_errors=True)
    info(f"making a git repository of the pristine tree in {git_dir}")
    env = {"GIT_DIR": git_dir, "GIT_WORK_TREE": source.pristine,
           "GIT_INDEX_FILE": git_dir + ".index"}
    series.git(["init", "-q", "--bare", "-b", "pristine", git_dir], CACHE)
    series.git(["add", "-A", "-f", "."], source.pristine, env)
    series.git(["commit", "-q", "-m", f"Debian linux-source-6.12 {source.pkgver}"],
               source.pristine, dict(env, **series.identity_env(series.BASE_IDENTITY,
                                                                 series.BASE_DATE)))
    os.unlink(git_dir + ".index")
    with open(stamp, "w") as f:
        f.write(want)
    return git_dir


def am_check(kernel, tally):
    """git am the generated series on the pristine repository; compare with the built tree."""
    source = kernel.source
    with tempfile.TemporaryDirectory(prefix="buildid-am.") as tmp:
        _covers, patches, entries, _ = generate(os.path.join(tmp, "series"))
        git_dir = pristine_repository(source)
        work = os.path.join(tmp, "linux")
        touched = entries.touched()
        series.git(["clone", "-q", "--shared", "--no-checkout", git_dir, work], tmp)
        # Only the files the series touches are checked out: git am needs no others.
        series.git(["sparse-checkout", "set", "--no-cone"] + ["/" + p for p in touched], work)
        series.git(["checkout", "-q", "--detach", "pristine"], work)
        base = series.git(["rev-parse", "HEAD"], work, text=True).strip()
        am = subprocess.run(["git", "-c", "user.name=am", "-c", "user.email=am@example.invalid",
                             "am", "-q", "--whitespace=error-all"] + patches, cwd=work,
                            capture_output=True, text=True,
                            env={"PATH": os.environ["PATH"], "HOME": tmp, "LC_ALL": "C",
                                 "GIT_CONFIG_NOSYSTEM": "1"})
        if not tally.check(am.returncode == 0, f"git am applies the {len(patches)} patches "
                           "of 'make series', series after series, on a git repository of "
                           "the pristine tree"):
            print((am.stdout + am.stderr).rstrip())
            return
        log = series.git(["log", "--reverse", "--format=%B%x00", f"{base}..HEAD"], work,
                         text=True).split("\x00")
        got = [m.strip() for m in log if m.strip()]
        want = [f"{e.subject}\n\n{series.with_signoff(e.body, entries.author)}".strip()
                for e in entries.entries]
        bad = [e.name for e, g, w in zip(entries.entries, got, want) if g != w]
        tally.check(len(got) == len(want) and not bad,
                    "git am made one commit per entry of patches/series, in order, each with "
                    "its message and sign-off" + (f"; differ: {', '.join(bad)}" if bad else "")
                    + ("" if len(got) == len(want) else f"; {len(got)} commits"))
        changed = series.git(["diff", "--name-only", base, "HEAD"], work,
                             text=True).split()
        modes = {}
        for line in series.git(["ls-tree", "-r", "HEAD", "--"] + changed, work,
                               text=True).splitlines():
            meta, path = line.split("\t", 1)
            modes[path] = meta.split()[0]
        differ = []
        for path in changed:
            full = os.path.join(work, path)
            built = os.path.join(source.tree, path)
            if os.path.exists(full) != os.path.exists(built) or (
                    os.path.exists(full) and not filecmp.cmp(full, built, shallow=False)):
                differ.append(path)
            elif path in modes and (modes[path] == "100755") != bool(
                    os.stat(built).st_mode & 0o100):
                differ.append(f"{path} (mode)")
        tally.check(not differ and set(changed) == set(touched),
                    f"the tree git am gives equals the built tree ({len(changed)} files "
                    "changed from pristine)" + (f"; differ: {', '.join(differ)}" if differ else "")
                    + ("" if set(changed) == set(touched) else
                       f"; touched but unchanged: {sorted(set(touched) - set(changed))}"))


# -- checkpatch --strict ----------------------------------------------------------

def load_accepted(path=None):
    """{(patch number, TYPE): (count, why)} from patches/checkpatch-accepted."""
    path = path or ACCEPTED
    accepted = {}
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(\d{4}) ([A-Z_]+) (\d+) (\S.*)$", line)
            if not m:
                raise HarnessError(f"{path}:{lineno}: want 'NNNN TYPE COUNT why'")
            key = (m.group(1), m.group(2))
            if key in accepted:
                raise HarnessError(f"{path}:{lineno}: {key[0]} {key[1]} is listed twice")
            accepted[key] = (int(m.group(3)), m.group(4))
    return accepted


def checkpatch_counts(checkpatch, patch):
    proc = subprocess.run(["perl", checkpatch, "--no-tree", "--strict", "--show-types",
                           "--quiet", patch], capture_output=True, text=True)
    # 0: clean; 1: reports, which must then be there.  Anything else, or a
    # 1 without a report, is checkpatch failing, not passing.
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not proc.stdout.strip()):
        raise HarnessError(f"checkpatch.pl failed on {os.path.basename(patch)} (status "
                           f"{proc.returncode}): {(proc.stdout + proc.stderr).strip()[:500]}")
    counts, lines = {}, []
    for line in proc.stdout.splitlines():
        m = CHECKPATCH_LINE.match(line)
        if m:
            counts[m.group(2)] = counts.get(m.group(2), 0) + 1
            lines.append(line)
    return counts, proc.stdout


def checkpatch_strict(patches, checkpatch, tally):
    """checkpatch --strict of each patch; patches/checkpatch-accepted numbers them as patches/ does."""
    accepted = load_accepted()
    used = set()
    for index, patch in enumerate(patches, 1):
        number = f"{index:04d}"
        counts, output = checkpatch_counts(checkpatch, patch)
        unexplained = []
        for kind, n in sorted(counts.items()):
            allowed, _why = accepted.get((number, kind), (0, ""))
            used.add((number, kind))
            if n > allowed:
                unexplained.append(f"{kind} x{n - allowed}")
            elif n < allowed:
                # A count left high would cover new reports of the type.
                unexplained.append(f"{kind}: {n}, but the list accepts {allowed}")
        shown = os.path.join(os.path.basename(os.path.dirname(patch)), os.path.basename(patch))
        if not tally.check(not unexplained, f"checkpatch --strict {number} ({shown})"
                           + (f": not in patches/checkpatch-accepted: {', '.join(unexplained)}"
                              if unexplained else "")):
            print(output.rstrip())
    stale = sorted(k for k in accepted if k not in used)
    tally.check(not stale, "every entry of patches/checkpatch-accepted is still needed"
                + (f"; stale: {', '.join(' '.join(k) for k in stale)}" if stale else ""))


# -- build after each patch ---------------------------------------------------------

class StepSource(Source):
    """A second working tree that series-check moves from patch to patch."""

    def __init__(self):
        super().__init__()
        self.use_work_base("-series")

    def set_state(self, state, touched):
        """Make the touched files what state says (pristine or absent if it has no entry)."""
        changed = len(sync_files(self.tree, self.pristine, state, touched))
        if changed:
            write_manifest(self.tree, self.tree_manifest)
        return changed


def option_off_fragment(symbols, tmp):
    """The test configuration with symbols (an option and what selects it) off."""
    with open(FRAGMENT) as f:
        lines = [line for line in f.read().splitlines()
                 if not any(re.match(rf"^(# )?{symbol}[= ]", line) for symbol in symbols)]
    path = os.path.join(tmp, f"buildid-{symbols[0][7:].lower()}-off.config")
    with open(path, "w") as f:
        f.write("\n".join(lines + [f"# {symbol} is not set" for symbol in symbols]) + "\n")
    return path


def step_kernel(source, fragment=FRAGMENT, touched=()):
    kernel = Kernel(fragment=fragment, flavor="series")
    kernel.source = source
    # A warning in an upstream file a patch changes fails its step too.
    kernel.own_extra = tuple(touched)
    return kernel


def cmd_series_check(first=1):
    t_start = time.monotonic()
    tally = Tally()
    _covers, patches, entries, pristine_source = generate()
    checkpatch = os.path.join(pristine_source.pristine, "scripts", "checkpatch.pl")
    banner("checkpatch --strict")
    checkpatch_strict(patches, checkpatch, tally)

    source = StepSource()
    if source.ensure_tree():
        # Files copied again carry the tarball's old mtimes: objects built
        # from other content would look up to date.
        build = step_kernel(source).build
        if os.path.isdir(build):
            info(f"dropping {build}: its working tree was copied again")
            shutil.rmtree(build)
    touched = entries.touched()
    symbols = series.kconfig_symbols(entries)
    n = len(entries.entries)
    timings = []
    with tempfile.TemporaryDirectory(prefix="buildid-series-check.") as tmp:
        for k in range(first, n + 1):
            entry = entries.entries[k - 1]
            banner(f"build after patch {k}/{n}: {entry.subject}")
            state = series.apply_generated(patches[:k], pristine_source.pristine, touched)
            changed = source.set_state(state, touched)
            kernel = step_kernel(source, touched=touched)
            t0 = time.monotonic()
            try:
                # Only the options of later patches may be missing from this tree.
                kernel.configure(tolerate={sym for sym, at in symbols.items() if at >= k})
                kernel.build_all()
            except HarnessError as e:
                tally.check(False, f"patch {k}/{n} ({entry.name}) builds: {e}")
                break
            dt = time.monotonic() - t0
            timings.append((k, dt))
            tally.check(True, f"patch {k}/{n} builds ({changed} files changed, {dt:.0f} s): "
                        f"{entry.subject}")
        else:
            for turned_off in OPTIONS_OFF:
                symbol = turned_off[0]
                off = "=n, ".join(turned_off) + "=n"
                banner(f"the last tree with {off}")
                kernel = step_kernel(source, option_off_fragment(turned_off, tmp), touched)
                t0 = time.monotonic()
                try:
                    # Options that depend on the one turned off go with it.
                    kernel.configure(tolerate=symbols)
                    have = open(os.path.join(kernel.build, ".config")).read()
                    if f"# {symbol} is not set" not in have:
                        raise HarnessError(f"{symbol} is still set")
                    kernel.build_all()
                    ok, why = True, ""
                except HarnessError as e:
                    ok, why = False, f": {e}"
                tally.check(ok, f"the last tree builds with {off} "
                            f"({time.monotonic() - t0:.0f} s){why}")
            # Leave the build directory configured as the test kernel is.
            step_kernel(source).configure()
    info(f"series-check took {(time.monotonic() - t_start) / 60:.1f} min")
    return tally.total()
