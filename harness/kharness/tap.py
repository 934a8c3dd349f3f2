# SPDX-License-Identifier: GPL-2.0
"""TAP and KTAP as trees of blocks, checked plan by plan.

A block is one test program's (or one KUnit suite's) list of results at
one nesting depth.  A nested block is closed by the result one level up
that names it ("ok 3 selftests: buildid: procmap_buildid", "ok 1
buildid_kunit"); a block that is never closed belongs to a program or
suite that died, and every "1..N" plan must be matched by N results.

Two ways of nesting are read: KTAP in a kernel log (timestamps, four
spaces per level) and kselftest's runner ("# " per level).
"""

import re

TS_PREFIX = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT = re.compile(r"^(not ok|ok)\s+(\d+)\b(?:\s*-)?\s*([^#]*?)\s*(?:#\s*(\w+)\b\s*(.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)\b")
VERSION = re.compile(r"^K?TAP version \d+")
SUBTEST = re.compile(r"^# Subtest: (\S+)")


class Result:
    def __init__(self, ok, number, name, directive, reason):
        self.ok = ok
        self.number = number
        self.name = name
        self.directive = (directive or "").upper()
        self.reason = reason or ""

    @property
    def skipped(self):
        return self.directive.startswith("SKIP")

    def __repr__(self):
        return (f"{'ok' if self.ok else 'not ok'} {self.number} {self.name}"
                + (f" # {self.directive}" if self.directive else ""))


class Block:
    """The results at one depth between a version or plan line and the closing result."""

    def __init__(self, depth, parent):
        self.depth = depth
        self.parent = parent
        self.name = None        # from "# Subtest:" or the closing result
        self.plan = None
        self.results = []
        self.closed_by = None   # the result one level up that ends this block
        self.children = []

    @property
    def path(self):
        names = []
        block = self
        while block is not None and block.depth >= 0:
            names.append(block.name or ("(top level)" if block.depth == 0 else "?"))
            block = block.parent
        return "/".join(reversed(names))

    def lineage(self):
        """This block and the blocks it is nested in."""
        block = self
        while block is not None and block.depth >= 0:
            yield block
            block = block.parent

    def problems(self):
        """What makes this block incomplete, not what its results say."""
        found = []
        if self.plan is not None and self.plan != len(self.results):
            found.append(f"{self.path}: plan 1..{self.plan} but {len(self.results)} results")
        if self.depth > 0 and self.closed_by is None:
            found.append(f"{self.path}: never finished (no result closes it)")
        return found

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


def ktap_line(raw):
    """(depth, content) of a kernel log line: four spaces per KTAP level."""
    line = TS_PREFIX.sub("", raw.rstrip())
    stripped = line.lstrip(" ")
    return (len(line) - len(stripped)) // 4, stripped


def kselftest_line(raw):
    """(depth, content) of kselftest runner output: one "# " per level.

    A line is at the depth where what is left is a TAP line; "# # text" is
    a comment of the program at depth 1, not a line at depth 2.
    """
    line = raw.rstrip()
    depth = 0
    while True:
        if RESULT.match(line) or PLAN.match(line) or VERSION.match(line):
            return depth, line
        if not line.startswith("#"):
            return depth, line
        rest = line[1:].lstrip(" ") if line.startswith("# ") or line == "#" else None
        if rest is None or not rest:
            return depth, line
        if SUBTEST.match(line):
            return depth, line
        depth += 1
        line = rest


def parse(text, line_depth):
    """The top-level blocks of text (one per TAP document), nested blocks as children.

    A log may hold several documents at depth 0 (the boot-time KUnit run,
    then a module's); each starts with a version or plan line.
    """
    top = Block(-1, None)       # holds the documents
    open_blocks = [top]         # open_blocks[d + 1] is the open block at depth d

    def block_at(depth):
        while len(open_blocks) <= depth + 1:
            parent = open_blocks[-1]
            child = Block(len(open_blocks) - 1, parent)
            parent.children.append(child)
            open_blocks.append(child)
        return open_blocks[depth + 1]

    def current_or_new(depth):
        """The open block at depth if nothing was reported in it yet, else a new one."""
        if len(open_blocks) > depth + 1:
            block = open_blocks[depth + 1]
            if block.plan is None and not block.results:
                return block
            # A new block at depth ends this one and the deeper ones, unfinished.
            del open_blocks[depth + 1:]
        return block_at(depth)

    pending_name = {}
    for raw in text.splitlines():
        depth, line = line_depth(raw)
        m = SUBTEST.match(line)
        if m:
            pending_name[depth] = m.group(1)
            if len(open_blocks) > depth + 1 and open_blocks[depth + 1].name is None:
                open_blocks[depth + 1].name = pending_name.pop(depth)
            continue
        m = PLAN.match(line)
        if VERSION.match(line) or m:
            block = current_or_new(depth)
            if m:
                block.plan = int(m.group(1))
            if depth in pending_name:
                block.name = pending_name.pop(depth)
            continue
        m = RESULT.match(line)
        if not m:
            continue
        result = Result(m.group(1) == "ok", int(m.group(2)), m.group(3).strip(), m.group(4),
                        m.group(5))
        block_at(depth).results.append(result)
        if len(open_blocks) > depth + 2:
            child = open_blocks[depth + 2]
            child.closed_by = result
            if child.name is None:
                child.name = result.name
            del open_blocks[depth + 2:]
        pending_name.pop(depth + 1, None)
    return top.children


def parse_ktap(text):
    return parse(text, ktap_line)


def parse_kselftest(text):
    return parse(text, kselftest_line)


def blocks(documents):
    """Every block of the documents, depth first."""
    for doc in documents:
        yield from doc.walk()


def incomplete(documents):
    """Every plan not matched by its results and every block never closed."""
    return [p for block in blocks(documents) for p in block.problems()]


def named(documents, name):
    """The blocks (at any depth) named name."""
    return [block for block in blocks(documents) if block.name == name]
