# SPDX-License-Identifier: GPL-2.0
"""Command line of the harness; the root Makefile calls these commands."""

import argparse
import os
import sys

from .common import HarnessError, check_pinned_tools


def cmd_tree(_args):
    from .kbuild import Kernel
    Kernel().prepare_tree()
    return 0


def cmd_config(_args):
    from .kbuild import Kernel
    print(Kernel().prepare().build)
    return 0


def cmd_build(_args):
    from .kbuild import build_kernel
    build_kernel()
    return 0


def cmd_csource(_args):
    from .kbuild import Kernel
    print(Kernel().source.c_reference())
    return 0


def cmd_fuzz(args):
    import subprocess
    from .common import REPO
    from .guest import fuzz_command
    from .kbuild import Kernel
    env = dict(os.environ, BUILDID_C_SOURCE=Kernel().source.c_reference())
    return subprocess.run(fuzz_command(args.seconds), cwd=REPO, env=env,
                          check=False).returncode


def cmd_series(_args):
    from .seriescheck import cmd_series
    return cmd_series()


def cmd_series_check(args):
    from .seriescheck import cmd_series_check
    return cmd_series_check(first=args.first)


def cmd_builddir(_args):
    from .kbuild import Kernel
    print(Kernel().build)
    return 0


def cmd_vm(args):
    from .vm import run_vm
    cmd = args.command
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise HarnessError("vm: no command given")
    return run_vm(" ".join(cmd) if len(cmd) > 1 else cmd[0], timeout=args.timeout,
                  memory=args.memory, append=args.append, check_log=not args.no_log_check)


def cmd_test(args):
    from .stages import run_tests
    return run_tests(args.stages)


def cmd_run(_args):
    from .stages import run_demo
    return run_demo()


def cmd_bench(_args):
    from .bench import run_bench
    return run_bench()


def cmd_kcsan(_args):
    from .kcsan import run_kcsan
    return run_kcsan()


def cmd_bpf_selftests(_args):
    from .bpfselftests import run_bpf_selftests
    return run_bpf_selftests()


def cmd_fixes_check(_args):
    from .fixescheck import run_fixes_check
    return run_fixes_check()


def cmd_mutants(args):
    from .mutants import run_mutants
    return run_mutants(args.mutants)


def main(argv):
    p = argparse.ArgumentParser(prog="kharness", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("tree", help="extract the source and lay the overlay on it")
    sub.add_parser("config", help="generate and check the kernel .config")
    sub.add_parser("build", help="build the kernel incrementally")
    sub.add_parser("builddir", help="print the build directory")
    sub.add_parser("series", help="write the patch series (git format-patch) to out/series")
    c = sub.add_parser("series-check", help="checkpatch --strict, and build after each patch")
    c.add_argument("--from", dest="first", type=int, default=1,
                   help="first patch to build after (default 1)")
    sub.add_parser("csource", help="print the path of the pristine lib/buildid.c")
    f = sub.add_parser("fuzz", help="differential fuzzing of the parser against lib/buildid.c")
    f.add_argument("--seconds", type=int, default=600)
    v = sub.add_parser("vm", help="boot the built kernel and run a command as root")
    v.add_argument("--timeout", type=int, default=600, help="seconds (default 600)")
    v.add_argument("--memory", default="2G")
    v.add_argument("--append", action="append", default=[],
                   help="extra kernel command line parameter")
    v.add_argument("--no-log-check", action="store_true",
                   help="do not fail on kernel warnings in the log")
    v.add_argument("command", nargs=argparse.REMAINDER)
    t = sub.add_parser("test", help="run test stages")
    t.add_argument("stages", nargs="*")
    sub.add_parser("run", help="the 'make run' demo")
    m = sub.add_parser("mutants", help="check that the tests catch broken readers")
    m.add_argument("mutants", nargs="*", help="names of the mutants to run (default: all)")
    sub.add_parser("bench", help="build the benchmark kernel, run the benchmarks, write BENCHMARKS.md")
    sub.add_parser("kcsan", help="build the KCSAN kernel, run the build ID cache's KUnit suite in it")
    sub.add_parser("bpf-selftests", help="upstream's BPF selftests on the pristine and the "
                   "patched kernel, same config; fails on a test that only pristine passes")
    sub.add_parser("fixes-check", help="the fixes series alone on pristine 6.12: its "
                   "selftests/bpf tests pass with it and fail without it")
    args = p.parse_args(argv)
    try:
        check_pinned_tools()
        return globals()["cmd_" + args.cmd.replace("-", "_")](args)
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
