# SPDX-License-Identifier: GPL-2.0
"""TAP and KTAP trees: plans, closing results, nesting."""

import unittest

from kharness import tap

KTAP = """[    1.0] KTAP version 1
[    1.0] 1..2
[    1.1]     KTAP version 1
[    1.1]     # Subtest: suite_a
[    1.1]     # module: m
[    1.1]     1..3
[    1.1]     ok 1 case_one
[    1.1]     not ok 2 case_two
[    1.1]     ok 3 case_three # SKIP not here
[    1.1] # suite_a: pass:1 fail:1 skip:1 total:3
[    1.1] not ok 1 suite_a
[    1.2]     KTAP version 1
[    1.2]     # Subtest: suite_b
[    1.2]     1..1
[    1.2]         KTAP version 1
[    1.2]         # Subtest: param_case
[    1.2]         ok 1 p0
[    1.2]         ok 2 p1
[    1.2]     ok 1 param_case
[    1.2] ok 2 suite_b
[    5.0] KTAP version 1
[    5.0] 1..1
[    5.0]     KTAP version 1
[    5.0]     # Subtest: module_suite
[    5.0]     1..2
[    5.0]     ok 1 m_one
[    5.0]     ok 2 m_two
[    5.0] ok 1 module_suite
"""

KSELFTEST = """TAP version 13
1..2
# timeout set to 300
# selftests: buildid: procmap_buildid
# TAP version 13
# 1..3
# # Starting 3 tests from 2 test cases.
# #  RUN           procmap.elf32 ...
# ok 1 procmap.elf32
# # procmap_buildid.c:12:x: Expected 1 (1) == 2 (2)
# not ok 2 procmap.x
# ok 3 procmap.y # SKIP no reason
# # FAILED: 1 / 3 tests passed.
not ok 1 selftests: buildid: procmap_buildid # exit=1
# selftests: buildid: other
# 1..1
# ok 1 global.z
ok 2 selftests: buildid: other
"""


def names(blocks):
    return [(b.depth, b.name, b.plan, len(b.results)) for b in blocks]


class KtapTreeTest(unittest.TestCase):
    def test_documents_suites_and_params(self):
        docs = tap.parse_ktap(KTAP)
        self.assertEqual(len(docs), 2)
        self.assertEqual(names(tap.blocks(docs)), [
            (0, None, 2, 2), (1, "suite_a", 3, 3), (1, "suite_b", 1, 1),
            (2, "param_case", None, 2), (0, None, 1, 1), (1, "module_suite", 2, 2)])
        self.assertEqual(tap.incomplete(docs), [])
        a = tap.named(docs, "suite_a")[0]
        self.assertEqual([(r.ok, r.skipped) for r in a.results],
                         [(True, False), (False, False), (True, True)])
        self.assertEqual(a.results[2].reason, "not here")

    def test_plan_not_met(self):
        text = KTAP.replace("[    5.0]     ok 2 m_two\n", "")
        self.assertEqual(tap.incomplete(tap.parse_ktap(text)),
                         ["(top level)/module_suite: plan 1..2 but 1 results"])

    def test_suite_that_never_finished(self):
        # The module's suite crashed after its first case.
        text = KTAP[:KTAP.index("[    5.0]     ok 2 m_two")]
        self.assertEqual(tap.incomplete(tap.parse_ktap(text)), [
            "(top level): plan 1..1 but 0 results",
            "(top level)/module_suite: plan 1..2 but 1 results",
            "(top level)/module_suite: never finished (no result closes it)"])

    def test_extra_result_breaks_the_plan(self):
        text = KTAP.replace("[    1.1]     ok 3 case_three # SKIP not here\n",
                            "[    1.1]     ok 3 case_three # SKIP not here\n"
                            "[    1.1]     ok 4 case_four\n")
        self.assertEqual(tap.incomplete(tap.parse_ktap(text)),
                         ["(top level)/suite_a: plan 1..3 but 4 results"])


class KselftestTreeTest(unittest.TestCase):
    def test_programs_and_cases(self):
        docs = tap.parse_kselftest(KSELFTEST)
        self.assertEqual(names(tap.blocks(docs)), [
            (0, None, 2, 2), (1, "selftests: buildid: procmap_buildid", 3, 3),
            (1, "selftests: buildid: other", 1, 1)])
        self.assertEqual(tap.incomplete(docs), [])
        top = docs[0].results
        self.assertEqual((top[0].ok, top[0].directive, top[1].ok), (False, "EXIT", True))

    def test_depth_is_the_number_of_prefixes(self):
        self.assertEqual(tap.kselftest_line("# ok 1 procmap.elf32"), (1, "ok 1 procmap.elf32"))
        self.assertEqual(tap.kselftest_line("# # ok 1 nested"), (2, "ok 1 nested"))
        self.assertEqual(tap.kselftest_line("ok 2 selftests: proc: x"),
                         (0, "ok 2 selftests: proc: x"))
        depth, line = tap.kselftest_line("# # Starting 3 tests from 2 test cases.")
        self.assertFalse(tap.RESULT.match(line) or tap.PLAN.match(line))

    def test_program_that_died_mid_plan(self):
        text = KSELFTEST.replace("# not ok 2 procmap.x\n# ok 3 procmap.y # SKIP no reason\n", "")
        self.assertEqual(tap.incomplete(tap.parse_kselftest(text)), [
            "(top level)/selftests: buildid: procmap_buildid: plan 1..3 but 1 results"])

    def test_runner_cut_off(self):
        text = KSELFTEST[:KSELFTEST.index("ok 2 selftests: buildid: other")]
        self.assertEqual(tap.incomplete(tap.parse_kselftest(text)), [
            "(top level): plan 1..2 but 1 results",
            "(top level)/?: never finished (no result closes it)"])


if __name__ == "__main__":
    unittest.main()
