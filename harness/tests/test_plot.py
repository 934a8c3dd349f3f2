# SPDX-License-Identifier: GPL-2.0
"""The picture of make bench: PLOT lines in, bars on the right side of 1 out."""

import re
import unittest

from kharness.plot import ratio_svg, split_plot_lines

OUTPUT = """### A table

| a | b |
|---|---|
PLOT\tC time / Rust time (median)\tsmall library, nofault\t1.650
| 1 | 2 |
PLOT\tC time / Rust time (median)\tevicted\t0.800
PLOT\ttext / PROCMAP_QUERY (median)\tpython3: symbolize\t10.300
"""


def bars(svg):
    """(x, width, value) of each bar."""
    return [(float(x), float(w), float(v)) for x, w, v in re.findall(
        r'<rect class="bar" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)" '
        r'height="[0-9]+" fill="#[0-9a-f]+" data-value="([0-9.]+)"', svg)]


def axis_x(svg):
    return float(re.search(r'<line x1="([0-9.]+)" y1="[0-9]+" x2="\1" y2="[0-9]+" '
                           r'stroke="black"/>', svg).group(1))


class PlotTest(unittest.TestCase):
    def test_split_keeps_tables_and_groups_ratios(self):
        tables, groups = split_plot_lines(OUTPUT)
        self.assertNotIn("PLOT", tables)
        self.assertIn("| 1 | 2 |", tables)
        self.assertEqual([g for g, _ in groups],
                         ["C time / Rust time (median)", "text / PROCMAP_QUERY (median)"])
        self.assertEqual(groups[0][1], [("small library, nofault", 1.65), ("evicted", 0.8)])

    def test_bad_line_is_an_error(self):
        for bad in ("PLOT\tonly a group\n", "PLOT\tg\tl\tinf\n", "PLOT\tg\tl\tnan\n",
                    "PLOT\tg\tl\t0\n"):
            with self.assertRaises(ValueError, msg=bad):
                split_plot_lines(bad)

    def test_wide_ranges_keep_ticks_apart(self):
        svg = ratio_svg([("g", [("a", 1 / 4096), ("b", 4096.0)])], "t")
        ticks = [float(x) for x in re.findall(r'<text x="([0-9.]+)" y="[0-9]+" '
                                              r'text-anchor="middle">', svg)]
        self.assertLessEqual(len(ticks), 13)
        self.assertGreater(min(b - a for a, b in zip(ticks, ticks[1:])), 30)

    def test_bars_grow_from_one_in_the_right_direction(self):
        _, groups = split_plot_lines(OUTPUT)
        svg = ratio_svg(groups, "t")
        one = axis_x(svg)
        drawn = bars(svg)
        self.assertEqual([v for _, _, v in drawn], [1.65, 0.8, 10.3])
        faster, slower, ioctl = drawn
        self.assertAlmostEqual(faster[0], one, places=0)
        self.assertAlmostEqual(slower[0] + slower[1], one, places=0)
        # log scale: 10.3 is about log2(10.3)/log2(1.65) times as long as 1.65
        self.assertAlmostEqual(ioctl[1] / faster[1], 4.65, delta=0.1)
        self.assertIn("python3: symbolize", svg)

    def test_labels_are_escaped(self):
        svg = ratio_svg([("g", [("<a & b>", 2.0)])], "t & u")
        self.assertIn("&lt;a &amp; b&gt;", svg)
        self.assertIn("t &amp; u", svg)


if __name__ == "__main__":
    unittest.main()
