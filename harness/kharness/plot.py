# SPDX-License-Identifier: GPL-2.0
"""The picture of BENCHMARKS.md: the benchmarks' ratios as bars on a log scale.

The benchmark programs print one line per ratio, "PLOT<TAB>group<TAB>label<TAB>value",
next to their Markdown tables; split_plot_lines() takes them out of the output and
ratio_svg() draws them, one group of bars per kind of ratio, with 1 (no difference)
as the axis that bars grow from: right when the value is above 1.
"""

import math
from xml.sax.saxutils import escape

LABEL_WIDTH = 430
BAR_AREA = 420
BAR_HEIGHT = 16
ROW = 22
MARGIN = 12
TITLE_HEIGHT = 30


def split_plot_lines(output):
    """The output without its PLOT lines, and the groups of (label, value) they held."""
    groups = {}
    kept = []
    for line in output.splitlines():
        if not line.startswith("PLOT\t"):
            kept.append(line)
            continue
        parts = line.split("\t")
        if len(parts) != 4:
            raise ValueError(f"bad PLOT line: {line!r}")
        _, group, label, value = parts
        number = float(value)
        if not math.isfinite(number) or number <= 0:
            raise ValueError(f"a ratio must be a positive number: {line!r}")
        groups.setdefault(group, []).append((label, number))
    return "\n".join(kept) + "\n", list(groups.items())


def _scale(groups):
    """Powers of two that cover every value and 1."""
    values = [v for _, rows in groups for _, v in rows if v > 0]
    low = min([1.0] + values)
    high = max([1.0] + values)
    return math.floor(math.log2(low)), math.ceil(math.log2(high))


def ratio_svg(groups, title):
    """An SVG picture of @groups: [(group title, [(label, ratio), ...]), ...]."""
    lo, hi = _scale(groups)
    if hi == lo:
        hi = lo + 1
    span = hi - lo

    def x_of(value):
        value = max(value, 2.0 ** lo)
        return LABEL_WIDTH + (math.log2(value) - lo) / span * BAR_AREA

    rows = sum(len(r) + 2 for _, r in groups)
    width = LABEL_WIDTH + BAR_AREA + 80
    height = TITLE_HEIGHT + rows * ROW + 2 * MARGIN + 20
    one = x_of(1.0)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 14}" font-size="15" font-weight="bold">'
        f'{escape(title)}</text>',
    ]
    y = TITLE_HEIGHT + MARGIN
    for group, items in groups:
        y += ROW
        out.append(f'<text x="{MARGIN}" y="{y}" font-weight="bold">{escape(group)}</text>')
        for label, value in items:
            y += ROW
            x = x_of(value)
            left, right = min(x, one), max(x, one)
            colour = "#2b7bb9" if value >= 1 else "#d9822b"
            out.append(f'<text x="{LABEL_WIDTH - 8}" y="{y}" text-anchor="end">'
                       f'{escape(label)}</text>')
            out.append(f'<rect class="bar" x="{left:.1f}" y="{y - BAR_HEIGHT + 4}" '
                       f'width="{max(right - left, 1):.1f}" height="{BAR_HEIGHT}" '
                       f'fill="{colour}" data-value="{value:.3f}"/>')
            out.append(f'<text x="{right + 4:.1f}" y="{y}">{value:.2f}</text>')
        y += ROW // 2
    axis_top = TITLE_HEIGHT + MARGIN
    out.append(f'<line x1="{one:.1f}" y1="{axis_top}" x2="{one:.1f}" y2="{y}" '
               'stroke="black"/>')
    out.append(f'<line x1="{LABEL_WIDTH}" y1="{y}" x2="{LABEL_WIDTH + BAR_AREA}" y2="{y}" '
               'stroke="black"/>')
    step = max(1, math.ceil(span / 10))
    for power in range(lo, hi + 1, step):
        x = x_of(2.0 ** power)
        value = 2.0 ** power
        text = f"{value:g}" if value >= 1 else f"1/{2 ** -power}"
        out.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 5}" stroke="black"/>')
        out.append(f'<text x="{x:.1f}" y="{y + 18}" text-anchor="middle">{text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
