# SPDX-License-Identifier: GPL-2.0
"""The patch series: the one description of what the project changes in the kernel tree.

patches/series lists the commits in order.  Each entry names a file under
patches/ that holds the commit message and, after a "---" line, the diff it
makes to files that exist at that point of the series; indented lines under
the entry name the project's files (copies in this repository, at their
final content) that the commit adds.  A project file changed by a later
commit is added in the form that the later diff, applied in reverse to the
final content, gives, so the repository keeps one copy of each file and the
series still builds up step by step.

"Series:" lines cut the commits into the series that go to different
trees, in the order they are sent: each names its output directory, its
cover letter under patches/ and its subject prefix, and applies on the
one before it.

From this, the harness makes real commits on the pristine versions of the
touched files and runs 'git format-patch'; the kernel tree that is built is
the pristine tree with those generated patches applied by 'git apply', so
what is built is what is sent.
"""

import os
import re
import shutil
import subprocess
import tempfile

from .common import REPO, HarnessError

PATCHES = os.path.join(REPO, "patches")
PATCH_NAME = re.compile(r"^(\d{4})-[a-z0-9][a-z0-9_-]*\.patch$")
SECTION_START = re.compile(r"^--- (?:a/)?(\S+)")
SECTION_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
# Fixed so that the same repository always gives the same patches.
BASE_DATE = "2026-11-26T00:00:00+00:00"
BASE_IDENTITY = ("Debian linux-source-6.12", "linux-source@debian.invalid")


class Entry:
    """One commit of the series."""

    def __init__(self, name, message, sections, adds):
        self.name = name
        lines = message.strip("\n").split("\n")
        self.subject = lines[0].strip()
        self.body = "\n".join(lines[1:]).strip("\n")
        self.sections = sections  # [(path, diff text of that file)]
        self.adds = adds

    def touched(self):
        return [p for p, _ in self.sections] + self.adds


class Part:
    """One series sent on its own: consecutive commits, with their cover letter."""

    def __init__(self, name, cover_file, prefix, cover, first):
        self.name = name
        self.cover_file = cover_file
        self.prefix = prefix
        self.cover = cover
        self.first = first  # index of its first entry
        self.count = 0


class Series:
    def __init__(self, author, entries, parts):
        self.author = author
        self.entries = entries
        self.parts = parts

    def touched(self):
        seen = []
        for entry in self.entries:
            for path in entry.touched():
                if path not in seen:
                    seen.append(path)
        return seen

    def added(self):
        return {path: e for e in self.entries for path in e.adds}


def split_patch(text, name):
    """(message, [(path, section)]) of a patch file; sections are per-file diffs."""
    lines = text.split("\n")
    try:
        cut = lines.index("---")
    except ValueError:
        return text, []
    message = "\n".join(lines[:cut])
    sections, current = [], None
    for i, line in enumerate(lines[cut + 1:]):
        m = SECTION_START.match(line)
        if m and i + 1 < len(lines) - cut - 1 and SECTION_TARGET.match(lines[cut + 2 + i]):
            target = SECTION_TARGET.match(lines[cut + 2 + i]).group(1)
            current = [target, [line]]
            sections.append(current)
        elif current is not None:
            current[1].append(line)
        elif line.strip():
            raise HarnessError(f"patches/{name}: text after '---' that is not a diff: {line!r}")
    out = []
    for path, body in sections:
        while body and not body[-1]:
            body.pop()
        if path in [p for p, _ in out]:
            raise HarnessError(f"patches/{name}: {path} is diffed twice")
        out.append((path, "\n".join(body) + "\n"))
    return message, out


def load(repo=REPO, project=None):
    """Parse patches/series and its patch files; check that they describe one tree."""
    manifest = os.path.join(repo, "patches", "series")
    try:
        with open(manifest) as f:
            text = f.read()
    except OSError as e:
        raise HarnessError(f"patches/series: {e.strerror}") from e
    author, entries, current, parts = None, [], None, []
    for lineno, raw in enumerate(text.splitlines(), 1):
        where = f"patches/series:{lineno}"
        line = raw.split("#", 1)[0].rstrip() if not raw.startswith("\t") else raw.rstrip()
        if not line.strip():
            continue
        if line.startswith("Series: "):
            m = re.match(r"^Series: ([a-z0-9][a-z0-9-]*) (cover-letter[a-z0-9-]*) (\S.*)$", line)
            if not m:
                raise HarnessError(f"{where}: want 'Series: NAME cover-letter-FILE PREFIX'")
            if m.group(1) in [p[0] for p in parts]:
                raise HarnessError(f"{where}: a second series named {m.group(1)}")
            parts.append((m.group(1), m.group(2), m.group(3).strip(), len(entries)))
            current = None
        elif line.startswith("From: "):
            author = line[len("From: "):].strip()
            if not re.match(r"^[^<>]+ <[^<>@\s]+@[^<>\s]+>$", author):
                raise HarnessError(f"{where}: From: wants 'Name <email>'")
        elif raw.startswith("\t"):
            if current is None:
                raise HarnessError(f"{where}: a file before the first patch")
            current[1].append(line.strip())
        else:
            name = line.strip()
            m = PATCH_NAME.match(name)
            if not m:
                raise HarnessError(f"{where}: {name!r} is not NNNN-subject.patch")
            if int(m.group(1)) != len(entries) + 1:
                raise HarnessError(f"{where}: {name} is entry {len(entries) + 1} of the series")
            current = [name, []]
            entries.append(current)
    if author is None:
        raise HarnessError("patches/series: no 'From: Name <email>' line")
    if not entries:
        raise HarnessError("patches/series: no patches")
    parsed = []
    for name, adds in entries:
        try:
            with open(os.path.join(repo, "patches", name)) as f:
                message, sections = split_patch(f.read(), name)
        except OSError as e:
            raise HarnessError(f"patches/{name}: {e.strerror}") from e
        entry = Entry(name, message, sections, adds)
        if not entry.subject or not re.match(r"^[\w./-]+(, ?[\w./-]+)*: \S", entry.subject):
            raise HarnessError(f"patches/{name}: subject {entry.subject!r} is not "
                               "'subsystem: summary'")
        if not entry.body:
            raise HarnessError(f"patches/{name}: the commit message has no body")
        if "Signed-off-by:" in entry.body:
            raise HarnessError(f"patches/{name}: Signed-off-by is added by 'make series'")
        if not sections and not adds:
            raise HarnessError(f"patches/{name}: the commit changes nothing")
        parsed.append(entry)
    listed = set(os.listdir(os.path.join(repo, "patches")))
    stray = sorted(n for n in listed if n.endswith(".patch")
                   and n not in {e.name for e in parsed})
    if stray:
        raise HarnessError("patches/series does not list " + ", ".join(stray))
    if not parts:
        parts = [("series", "cover-letter", "RFC PATCH", 0)]
    if parts[0][3] != 0:
        raise HarnessError("patches/series: patches before the first 'Series:' line")
    loaded = []
    for k, (name, cover_file, prefix, first) in enumerate(parts):
        try:
            with open(os.path.join(repo, "patches", cover_file)) as f:
                cover = f.read()
        except OSError as e:
            raise HarnessError(f"patches/{cover_file}: {e.strerror}") from e
        part = Part(name, cover_file, prefix, cover, first)
        part.count = (parts[k + 1][3] if k + 1 < len(parts) else len(parsed)) - first
        if not part.count:
            raise HarnessError(f"patches/series: series {name} has no patches")
        loaded.append(part)
    series = Series(author, parsed, loaded)
    check_ownership(series, project)
    return series


def check_ownership(series, project):
    """Every project file is added by exactly one commit and diffed only after it."""
    added = {}
    for i, entry in enumerate(series.entries):
        for path in entry.adds:
            if path in added:
                raise HarnessError(f"{path} is added by both {series.entries[added[path]].name} "
                                   f"and {entry.name}")
            added[path] = i
    for i, entry in enumerate(series.entries):
        for path, _ in entry.sections:
            if path in added and added[path] >= i:
                raise HarnessError(f"patches/{entry.name} diffs {path} before "
                                   f"{series.entries[added[path]].name} adds it")
    if project is not None:
        missing = sorted(set(project) - set(added))
        if missing:
            raise HarnessError("project files that no commit of patches/series adds:\n  "
                               + "\n  ".join(missing))
        gone = sorted(set(added) - set(project))
        if gone:
            raise HarnessError("patches/series adds files the repository does not have:\n  "
                               + "\n  ".join(gone))


def apply_section(data, path, section, reverse, name):
    """The content of one file after (or, with reverse, before) one diff section."""
    with tempfile.TemporaryDirectory(prefix="buildid-series.") as tmp:
        target = os.path.join(tmp, "f")
        with open(target, "wb") as f:
            f.write(data)
        proc = subprocess.run(
            # --forward in both directions: with --batch alone, patch applies a
            # diff that looks reversed the other way round and succeeds.
            ["patch", "--batch", "--forward"] + (["--reverse"] if reverse else []) + ["--fuzz=0",
             "--no-backup-if-mismatch", "--reject-file=-", "-s", target],
            input=section.encode(), capture_output=True)
        if proc.returncode:
            how = "in reverse to the final content of" if reverse else "to"
            raise HarnessError(f"patches/{name} does not apply {how} {path}:\n"
                               + (proc.stdout + proc.stderr).decode(errors="replace").rstrip())
        with open(target, "rb") as f:
            return f.read()


def file_mode(path):
    return 0o755 if os.stat(path).st_mode & 0o111 else 0o644


def states(series, pristine, repo=REPO):
    """For each commit, {path: (bytes, mode)} of every touched file after it.

    Files of the pristine tree go forward from their pristine content;
    project files go backward from their final content in the repository.
    """
    added = series.added()
    n = len(series.entries)
    project = {}
    for path, owner in added.items():
        full = os.path.join(repo, path)
        with open(full, "rb") as f:
            data = f.read()
        first = series.entries.index(owner)
        versions = [None] * n
        for i in range(n - 1, first - 1, -1):
            versions[i] = data
            if i == first:
                break
            for p, section in series.entries[i].sections:
                if p == path:
                    data = apply_section(data, path, section, True, series.entries[i].name)
        project[path] = (versions, file_mode(full), first)
    out, upstream = [], {}
    for i, entry in enumerate(series.entries):
        for path, section in entry.sections:
            if path in added:
                continue
            if path not in upstream:
                src = os.path.join(pristine, path)
                if not os.path.isfile(src):
                    raise HarnessError(f"patches/{entry.name} diffs {path}, which the pristine "
                                       "tree does not have (list a new file under its entry)")
                with open(src, "rb") as f:
                    upstream[path] = (f.read(), file_mode(src))
            data, mode = upstream[path]
            upstream[path] = (apply_section(data, path, section, False, entry.name), mode)
        state = dict(upstream)
        for path, (versions, mode, first) in project.items():
            if i >= first:
                state[path] = (versions[i], mode)
        out.append(state)
    return out


def git(args, cwd, env=None, **kwargs):
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": cwd, "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "TZ": "UTC"}
    base.update(env or {})
    proc = subprocess.run(["git"] + args, cwd=cwd, env=base, capture_output=True, **kwargs)
    if proc.returncode:
        err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
        raise HarnessError(f"git {' '.join(args[:3])} failed in {cwd}:\n{err.rstrip()}")
    return proc.stdout


def identity_env(identity, date):
    name, email = identity
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": date}


def parse_identity(text):
    m = re.match(r"^(.+?) <(.+)>$", text)
    return m.group(1), m.group(2)


def write_state(work, state, previous):
    for path in set(previous) - set(state):
        os.unlink(os.path.join(work, path))
    for path, (data, mode) in state.items():
        if previous.get(path) == (data, mode):
            continue
        full = os.path.join(work, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        os.chmod(full, mode)


TRAILER = re.compile(r"^[A-Z][A-Za-z-]*: \S")


def with_signoff(body, author):
    """The body with Signed-off-by in its trailer block (a new block if it has none)."""
    last = body.rsplit("\n\n", 1)[-1]
    joint = "\n" if all(TRAILER.match(line) for line in last.split("\n")) else "\n\n"
    return f"{body}{joint}Signed-off-by: {author}\n"


def commit_dates(series, repo=REPO):
    """A Date per patch: the repository's last commit time, one minute apart."""
    try:
        stamp = int(subprocess.run(["git", "-C", repo, "log", "-1", "--format=%ct"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    except (subprocess.CalledProcessError, ValueError, FileNotFoundError):
        stamp = int(os.stat(os.path.join(repo, "patches", "series")).st_mtime)
    n = len(series.entries)
    return [f"@{stamp - 60 * (n - i)} +0000" for i in range(n)], f"@{stamp} +0000"


def generate(series, pristine, out_dir, repo=REPO, mail=False):
    """Commit the series on the pristine versions of its files; format-patch each part.

    Each part of the series goes to out_dir/N-NAME/ with its own cover
    letter and numbering.  With mail, address each patch as git send-email
    would send it (see address()); the builds, which only apply the
    patches, skip that.  Returns (cover letters, one per part; every patch
    file in order; final state).
    """
    all_states = states(series, pristine, repo)
    author = parse_identity(series.author)
    dates, cover_date = commit_dates(series, repo)
    covers, patches = [], []
    with tempfile.TemporaryDirectory(prefix="buildid-series-git.") as work:
        git(["init", "-q", "-b", "series"], work)
        base = {}
        for path in series.touched():
            src = os.path.join(pristine, path)
            if os.path.isfile(src):
                with open(src, "rb") as f:
                    base[path] = (f.read(), file_mode(src))
        write_state(work, base, {})
        git(["add", "-A"], work)
        git(["commit", "-q", "--allow-empty", "-m", "pristine"], work,
            identity_env(BASE_IDENTITY, BASE_DATE))
        git(["tag", "pristine"], work)
        previous = base
        for index, (entry, state, date) in enumerate(zip(series.entries, all_states, dates)):
            full = dict(base)
            full.update(state)
            write_state(work, full, previous)
            previous = full
            git(["add", "-A"], work)
            message = f"{entry.subject}\n\n{with_signoff(entry.body, series.author)}"
            git(["commit", "-q", "-F", "-"], work, identity_env(author, date),
                input=message.encode())
            git(["tag", f"entry-{index + 1}"], work)
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        for number, part in enumerate(series.parts, 1):
            part_dir = os.path.join(out_dir, f"{number}-{part.name}")
            os.makedirs(part_dir)
            since = f"entry-{part.first}" if part.first else "pristine"
            names = git(["format-patch", "--cover-letter", "--zero-commit", "--no-signature",
                         "--numbered", f"--subject-prefix={part.prefix}", "-o", part_dir,
                         f"{since}..entry-{part.first + part.count}"], work,
                        identity_env(author, cover_date), text=True).split()
            files = [os.path.join(part_dir, os.path.basename(n)) for n in names]
            if len(files) != part.count + 1:
                raise HarnessError(f"git format-patch wrote {len(files)} files for the "
                                   f"{part.count} commits and cover letter of {part.name}")
            fill_cover_letter(files[0], part.cover, repo, part.cover_file)
            if mail:
                address(files, pristine)
            covers.append(files[0])
            patches += files[1:]
    return covers, patches, all_states[-1]


def patch_id(path):
    """The stable patch ID of a format-patch file, as prerequisite-patch-id: names it."""
    with open(path, "rb") as f:
        out = git(["patch-id", "--stable"], os.path.dirname(path), input=f.read()).split()
    if not out:
        raise HarnessError(f"git patch-id found no diff in {path}")
    return out[0].decode()


def add_base_info(covers, patches, parts, base_commit):
    """End each cover letter as git format-patch --base would: the base commit, and the
    patch IDs of every patch of the series before it, on which this one applies."""
    prerequisites, done = [], 0
    for cover, part in zip(covers, parts):
        lines = [f"base-commit: {base_commit}"]
        lines += [f"prerequisite-patch-id: {i}" for i in prerequisites]
        with open(cover, "a") as f:
            f.write("\n" + "\n".join(lines) + "\n")
        prerequisites += [patch_id(p) for p in patches[done:done + part.count]]
        done += part.count


def recipients(patch, pristine):
    """(to, cc): what scripts/get_maintainer.pl of the pristine tree says of a patch.

    Maintainers are To, everyone else (reviewers, supporters, lists) Cc.
    Matches of MAINTAINERS keywords in a patch's prose are left out (the
    word "xdp" or "clang" in a message is no reason to write to netdev or
    llvm), and so is git history, which the pristine tree does not have.
    """
    proc = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                           "--no-keywords", os.path.abspath(patch)],
                          cwd=pristine, capture_output=True, text=True,
                          # Perl randomizes its hash order, and with it the order of
                          # recipients that tie: fixed so that a series is made the same way
                          # every time.
                          env=dict(os.environ, PERL_HASH_SEED="0", PERL_PERTURB_KEYS="0"))
    if proc.returncode != 0:
        raise HarnessError(f"get_maintainer.pl {os.path.basename(patch)}: {proc.stderr.strip()}")
    to, cc = [], []
    for line in proc.stdout.splitlines():
        who, _, role = line.strip().partition(" (")
        if who:
            (to if role.startswith("maintainer:") else cc).append(who)
    return to, cc


def add_headers(path, to, cc):
    """Add To and Cc headers, for git send-email, to a format-patch file."""
    with open(path) as f:
        text = f.read()
    head, sep, body = text.partition("\n\n")
    if not sep:
        raise HarnessError(f"{path}: no end of the mail headers")
    for name, who in (("To", to), ("Cc", cc)):
        if who:
            head += f"\n{name}: " + ",\n ".join(who)
    with open(path, "w") as f:
        f.write(head + sep + body)


def address(patches, pristine):
    """Address each patch to its maintainers, and the cover letter to all of theirs."""
    all_to, all_cc = [], []
    for patch in patches[1:]:
        to, cc = recipients(patch, pristine)
        add_headers(patch, to, cc)
        all_to += [w for w in to if w not in all_to]
        all_cc += [w for w in cc if w not in all_cc]
    add_headers(patches[0], all_to, [w for w in all_cc if w not in all_to])


def benchmark_tables(text):
    """The markdown tables of BENCHMARKS.md, each a list of rows (lists of cells)."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            current.append(line)
        else:
            current = None
    return tables


def expand_cover(cover, benchmarks, cover_file="cover-letter"):
    """Fill {{commit}} and {{table N: first cells; ...}} from BENCHMARKS.md.

    The cover letter quotes rows, never copies of numbers, so that it says
    what the last 'make bench' measured; a row that is gone is an error.
    """
    m = re.search(r"measuring commit ([0-9a-f]{7,40})", benchmarks)
    if not m:
        raise HarnessError("BENCHMARKS.md does not name the commit it measured")
    tables = benchmark_tables(benchmarks)

    def table(match):
        index = int(match.group(1))
        if not 1 <= index <= len(tables):
            raise HarnessError(f"patches/{cover_file}: BENCHMARKS.md has no table {index}")
        rows = tables[index - 1]
        out = rows[:2]
        for want in [w.strip() for w in match.group(2).split(";") if w.strip()]:
            found = [r for r in rows[2:] if r.startswith(f"| {want} |")]
            if not found:
                raise HarnessError(f"patches/{cover_file}: table {index} of BENCHMARKS.md has "
                                   f"no row '{want}'")
            out.append(found[0])
        return "\n".join(out)

    text = cover.replace("{{commit}}", f"measured at commit {m.group(1)[:12]}")
    text = re.sub(r"\{\{table (\d+): ([^}]*)\}\}", table, text)
    if "{{" in text:
        raise HarnessError(f"patches/{cover_file}: unknown {{{{...}}}} field")
    return text


def fill_cover_letter(path, cover, repo=REPO, cover_file="cover-letter"):
    """Put a patches/cover-letter file's subject and text in format-patch's cover letter."""
    with open(os.path.join(repo, "BENCHMARKS.md")) as f:
        cover = expand_cover(cover, f.read(), cover_file)
    subject, _, blurb = cover.strip("\n").partition("\n")
    with open(path) as f:
        text = f.read()
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        raise HarnessError(f"{path}: git format-patch wrote no cover letter template")
    text = text.replace("*** SUBJECT HERE ***", subject.strip(), 1)
    text = text.replace("*** BLURB HERE ***", blurb.strip("\n"), 1)
    with open(path, "w") as f:
        f.write(text)


def apply_generated(patches, pristine, touched):
    """{path: (bytes, mode)}: the pristine files that the patches touch, with them applied.

    'git apply' outside a repository, on copies of the pristine files: the
    same patches 'git am' applies, so the tree built is the tree sent.
    """
    staged = {}
    with tempfile.TemporaryDirectory(prefix="buildid-apply.") as stage:
        for path in touched:
            src = os.path.join(pristine, path)
            if os.path.isfile(src):
                dst = os.path.join(stage, path)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
        for patch in patches:
            proc = subprocess.run(["git", "apply", "--whitespace=nowarn", patch], cwd=stage,
                                  capture_output=True, text=True,
                                  env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                       "GIT_CEILING_DIRECTORIES": os.path.dirname(stage)})
            if proc.returncode:
                raise HarnessError(f"{os.path.basename(patch)} does not apply:\n"
                                   + proc.stderr.rstrip())
        for path in touched:
            full = os.path.join(stage, path)
            if os.path.isfile(full):
                with open(full, "rb") as f:
                    staged[path] = (f.read(), file_mode(full))
    return staged


def kconfig_symbols(series, repo=REPO):
    """{CONFIG_X: index of the entry that defines X} for the config symbols the series adds."""
    symbols = {}
    for index, entry in enumerate(series.entries):
        texts = [section for path, section in entry.sections
                 if os.path.basename(path).startswith("Kconfig")]
        for path in entry.adds:
            if os.path.basename(path).startswith("Kconfig"):
                with open(os.path.join(repo, path)) as f:
                    texts.append("".join("+" + line for line in f))
        for text in texts:
            for name in re.findall(r"^\+\s*(?:menu)?config\s+(\w+)", text, re.M):
                symbols.setdefault("CONFIG_" + name, index)
    return symbols
