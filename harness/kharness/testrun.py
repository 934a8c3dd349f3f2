# SPDX-License-Identifier: GPL-2.0
"""Test stages of 'make test' and the 'make run' demo.

Every stage returns (passed, failed); a stage that cannot run at all counts
as one failure, so a broken stage can never make the total look green.
"""

import os
import re
import shlex
import subprocess
import sys
import time

from .common import CACHE, REPO, HarnessError, info, run
from .kbuild import Kernel
from .vm import boot, run_vm

HARNESS = os.path.join(REPO, "harness")
FUZZ_SECONDS = os.environ.get("FUZZ_SECONDS", "20")
TARGET_DIR = os.path.join(REPO, "target")

CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed")
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests?")
UNITTEST_FAILED = re.compile(r"^FAILED \((.*)\)")
TS_PREFIX = re.compile(r"^\[\s*\d+\.\d+\]\s?")
KTAP_RESULT = re.compile(r"^( *)(not ok|ok) \d+(?: -)? ?([^#]*?)\s*(#.*)?$")


def banner(name):
    print(f"\n===== {name} =====", flush=True)


def cargo_env():
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", TARGET_DIR)
    return env


def stage_host():
    """cargo test over the workspace and the harness' own unit tests."""
    passed = failed = 0
    proc = subprocess.run(["cargo", "test", "--workspace", "--color", "never"], cwd=REPO,
                          env=cargo_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    sys.stdout.write(proc.stdout)
    for line in proc.stdout.splitlines():
        m = CARGO_RESULT.match(line)
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
    if proc.returncode != 0 and failed == 0:
        failed += 1
    # Differential fuzzing of the parser against the C reference, bounded here
    # ('make fuzz FUZZ_SECONDS=N' runs it longer).
    proc = subprocess.run(["cargo", "run", "-q", "--release", "-p", "buildid-elf", "--bin",
                           "buildid-elf-fuzz", "--", "--seconds", FUZZ_SECONDS],
                          cwd=REPO, env=cargo_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    ok = proc.returncode == 0
    print(f"{'ok' if ok else 'not ok'} - differential fuzz, Rust parser vs lib/buildid.c "
          f"({FUZZ_SECONDS} s)")
    passed, failed = passed + ok, failed + (not ok)
    proc = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests",
                           "-t", "."], cwd=HARNESS, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    ran = bad = 0
    for line in proc.stdout.splitlines():
        m = UNITTEST_RAN.match(line)
        if m:
            ran = int(m.group(1))
        m = UNITTEST_FAILED.match(line)
        if m:
            bad = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", m.group(1)))
    if proc.returncode != 0 and bad == 0:
        bad = 1
    return passed + ran - min(bad, ran), failed + bad


def read_run_file(run_dir, name):
    """A file the guest left in its run directory, or "" if it did not."""
    try:
        with open(os.path.join(run_dir, name), errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def parse_ktap(text):
    """Count KUnit test cases in a kernel log.

    Cases are the results one level below a suite; a suite reported as
    failed without any case result counts as one failed case, and a suite
    that started but never finished (crash, hang) as one more.
    """
    passed = failed = 0
    cases = []
    suite_cases = 0
    open_suites = 0
    for raw in text.splitlines():
        line = TS_PREFIX.sub("", raw).rstrip()
        if re.match(r"^\s*# Subtest: ", line) and not line.startswith("        "):
            if not line.startswith("    "):
                continue
            open_suites += 1
            suite_cases = 0
            continue
        m = KTAP_RESULT.match(line)
        if not m:
            continue
        depth = len(m.group(1)) // 4
        ok = m.group(2) == "ok"
        directive = (m.group(4) or "").upper()
        if depth == 1:
            suite_cases += 1
            if "SKIP" in directive:
                continue
            cases.append((m.group(3), ok))
            if ok:
                passed += 1
            else:
                failed += 1
        elif depth == 0:
            open_suites = max(0, open_suites - 1)
            if not ok and suite_cases == 0 and "SKIP" not in directive:
                failed += 1
                cases.append((m.group(3), False))
    failed += open_suites
    return passed, failed, cases


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


def stage_kunit(kernel):
    """Built-in KUnit suites run at boot; their KTAP is read from the log."""
    bindir = guest_programs()
    script = os.path.join(HARNESS, "guest", "kunit.sh")
    status, run_dir = boot(f"BUILDID_GUEST_BIN={shlex.quote(bindir)} sh {shlex.quote(script)}",
                           kernel=kernel, cwd="/")
    log = read_run_file(run_dir, "dmesg.txt")
    passed, failed, cases = parse_ktap(log)
    for name, ok in cases:
        if not ok:
            print(f"KUnit FAILED: {name}")
    print(f"KUnit: {passed} passed, {failed} failed")
    if passed + failed == 0:
        info("no KUnit results found in the kernel log")
        failed += 1
    if status != 0:
        failed += 1
    return passed, failed


TAP_RESULT = re.compile(r"^(not ok|ok) \d+ (?:- )?(.*?)(\s+#\s*(\w+).*)?$")


def parse_tap(text):
    """Top-level TAP results of kselftest's runner (one per test program)."""
    passed = failed = 0
    for line in text.splitlines():
        m = TAP_RESULT.match(line.strip() if line.startswith("ok") or line.startswith("not ok")
                             else line)
        if not m:
            continue
        directive = (m.group(4) or "").upper()
        if directive == "SKIP":
            continue
        if m.group(1) == "ok":
            passed += 1
        else:
            failed += 1
    return passed, failed


KSELFTEST_TARGETS = ["proc"]

# Upstream kselftests left out, each with the reason.
KSELFTEST_EXCLUDED = {
    # Walks all of /proc and asserts that no readdir fails; run after the
    # other proc tests in the VM it hits /proc/<pid> directories of tasks
    # that exit under it (passes alone, fails in the full run).
    "proc:read",
}


def kselftest_list(install):
    """COLLECTION:TEST names of the installed kselftests minus the excluded ones."""
    with open(os.path.join(install, "kselftest-list.txt")) as f:
        tests = [line.strip() for line in f if line.strip()]
    return [t for t in tests if t not in KSELFTEST_EXCLUDED]


def build_kselftests(kernel):
    out = os.path.join(kernel.build, "kselftest")
    install = os.path.join(out, "install")
    run(["make", "-s", "-C", os.path.join(kernel.source.tree, "tools", "testing", "selftests"),
         f"O={out}", f"KHDR_INCLUDES=-isystem {kernel.build}/usr/include",
         "TARGETS=" + " ".join(KSELFTEST_TARGETS), f"INSTALL_PATH={install}", "install"],
        stdout=subprocess.DEVNULL)
    return install


def build_buildid_kselftests(kernel):
    """Build the buildid suite where the guest's make will look for it."""
    run(["make", "-s", "-C", os.path.join(kernel.source.tree, "tools", "testing", "selftests"),
         "TARGETS=buildid", f"O={kernel.build}", f"CLANG={BPF_CLANG}"],
        stdout=subprocess.DEVNULL)


BPF_CLANG = "clang-19"
BUILDID_SUITE_MARK = "=== buildid kselftests ==="
BPF_SUITE_MARK = "=== upstream BPF selftests ==="
TOOL_MARK = "=== buildid tool against readelf -n ==="
NESTED_TAP_RESULT = re.compile(r"^# (ok|not ok) \d+ (\S+)(?:\s+#\s*(\w+)\s*(.*))?$")


def parse_buildid_suite(text):
    """Every case of the buildid kselftests; a skip is a failure here.

    The test kernel has everything the suite needs, so a case that skips
    did not test what it claims.
    """
    passed = failed = 0
    programs_failed = 0
    for line in text.splitlines():
        m = NESTED_TAP_RESULT.match(line)
        if m:
            ok, name, directive, reason = m.groups()
            if directive and directive.upper() == "SKIP":
                print(f"buildid kselftest SKIPPED (counted as failed): {name}: {reason}")
                failed += 1
            elif ok == "ok":
                passed += 1
            else:
                print(f"buildid kselftest FAILED: {name}")
                failed += 1
            continue
        if line.startswith("not ok "):
            programs_failed += 1
    # A program that died before reporting its cases.
    if programs_failed and not failed:
        failed += programs_failed
    return passed, failed


# Upstream BPF selftests that exercise the build ID code.  test_progs is
# built with only these tests and the BPF programs they use: the full suite
# needs tools/testing/selftests/bpf/config in the kernel and rebuilds its
# ~900 BPF objects whenever vmlinux changes.
BPF_SELFTESTS = ("build_id", "stacktrace_build_id", "stacktrace_build_id_nmi")
BPF_SELFTEST_PROGS = ("test_build_id.c", "test_stacktrace_build_id.c",
                      "btf_data.c")  # btf_data: resolve_btfids runs on test_progs with it
BPF_SELFTEST_HELPERS = ("urandom_read", "liburandom_read.so", "uprobe_multi")
# The stacktrace_build_id_nmi test needs a hardware PMU, which TCG lacks.
BPF_SELFTEST_MAY_SKIP = {"stacktrace_build_id_nmi"}


def bpf_selftest_subset(kernel, subset):
    """Directories of symlinks to the chosen upstream tests and programs.

    They live in the output directory, which test_progs.c's include path
    has, so that its #include <prog_tests/tests.h> finds the generated list.
    """
    src = os.path.join(kernel.source.tree, "tools", "testing", "selftests", "bpf")
    wanted = {"prog_tests": [f"{t}.c" for t in BPF_SELFTESTS],
              "progs": list(BPF_SELFTEST_PROGS) +
              sorted(f for f in os.listdir(os.path.join(src, "progs")) if f.endswith(".h"))}
    for sub, names in wanted.items():
        d = os.path.join(subset, sub)
        os.makedirs(d, exist_ok=True)
        for name in os.listdir(d):
            if name not in names and name != "tests.h":
                os.unlink(os.path.join(d, name))
        for name in names:
            link, target = os.path.join(d, name), os.path.join(src, sub, name)
            if os.path.islink(link) and os.readlink(link) == target:
                continue
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(target, link)
    return src


def build_bpf_selftests(kernel):
    """Build the upstream test_progs subset; returns its output directory."""
    out = os.path.join(kernel.build, "bpf-selftests")
    src = bpf_selftest_subset(kernel, out)
    # The test objects are compiled as $(CURDIR)/<tests dir>/x.c, so the
    # subset directories are given relative to the selftests directory.
    rel = os.path.relpath(out, src)
    helpers = " ".join(os.path.join(out, h) for h in BPF_SELFTEST_HELPERS)
    # The other runners (test_maps, ...) share the overridden directories,
    # so make warns about duplicate recipes: the output is shown on failure.
    # feature-llvm=0: the JIT disassembler is not needed and Debian's
    # llvm-config lists static libraries that are not installed.
    cmd = ["make", "-s", "-C", src, f"OUTPUT={out}", f"VMLINUX_BTF={kernel.build}/vmlinux",
           f"TRUNNER_TESTS_DIR={rel}/prog_tests", f"TRUNNER_BPF_PROGS_DIR={rel}/progs",
           "LINKED_SKELS=", "LSKELS=", "LSKELS_EXTRA=", f"TRUNNER_EXTRA_FILES={helpers}",
           f"CLANG={BPF_CLANG}", "LLC=llc-19", "LLVM_STRIP=llvm-strip-19", "feature-llvm=0",
           f"KHDR_INCLUDES=-isystem {kernel.build}/usr/include",
           os.path.join(out, "test_progs")] + [os.path.join(out, h) for h in BPF_SELFTEST_HELPERS]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        print(proc.stdout)
        raise HarnessError(f"building the upstream BPF selftests failed: {' '.join(cmd)}")
    return out


TEST_PROGS_RESULT = re.compile(r"^#(\d+)(/\d+)?\s+(\S+):(OK|FAIL|SKIP)\b")


def parse_test_progs(text):
    """Results of test_progs: subtests where a test has them, else the test."""
    results = {}
    parents_with_subtests = set()
    for line in text.splitlines():
        m = TEST_PROGS_RESULT.match(line.strip())
        if not m:
            continue
        number, sub, name, result = m.groups()
        if sub:
            parents_with_subtests.add(number)
        results[(number, sub or "")] = (name, result)
    passed = failed = 0
    skipped = []
    for (number, sub), (name, result) in sorted(results.items()):
        if not sub and number in parents_with_subtests:
            continue
        if result == "OK":
            passed += 1
        elif result == "SKIP":
            skipped.append(name)
        else:
            print(f"upstream BPF selftest FAILED: {name}")
            failed += 1
    for name in skipped:
        if name.split("/")[0] in BPF_SELFTEST_MAY_SKIP:
            print(f"upstream BPF selftest skipped (no hardware PMU under TCG): {name}")
        else:
            print(f"upstream BPF selftest SKIPPED (counted as failed): {name}")
            failed += 1
    return passed, failed


def build_tool():
    """The user-space buildid tool, as `make run` uses it."""
    run(["cargo", "build", "--release", "-q", "-p", "buildid"], cwd=REPO, env=cargo_env())
    return os.path.join(TARGET_DIR, "release", "buildid")


def parse_tool_check(text):
    """Mappings on which show-buildids.sh found the tool and readelf in agreement."""
    passed = len(re.findall(r"\[same\]", text))
    failed = len(re.findall(r"\[DIFFERENT\]", text))
    for line in text.splitlines():
        if "[DIFFERENT]" in line or line.startswith("buildid "):
            print(f"buildid tool check: {line.strip()}")
    if "tool-status=0" not in text or passed == 0:
        failed += 1
    return passed, failed


def stage_kselftest(kernel):
    kernel.make("headers")
    install = build_kselftests(kernel)
    build_buildid_kselftests(kernel)
    bpf_out = build_bpf_selftests(kernel)
    tool = build_tool()
    show = os.path.join(HARNESS, "guest", "show-buildids.sh")
    selection = " ".join(f"-t {shlex.quote(t)}" for t in kselftest_list(install))
    guest_script = os.path.join(HARNESS, "guest", "kselftest-buildid.sh")
    command = (f"./run_kselftest.sh {selection}; echo {shlex.quote(BUILDID_SUITE_MARK)}; "
               f"CLANG={BPF_CLANG} sh {shlex.quote(guest_script)} "
               f"{shlex.quote(kernel.source.tree)} {shlex.quote(kernel.build)}; "
               f"status=$?; echo {shlex.quote(BPF_SUITE_MARK)}; "
               f"(cd {shlex.quote(bpf_out)} && ./test_progs -t {','.join(BPF_SELFTESTS)}); "
               f"echo {shlex.quote(TOOL_MARK)}; sh {shlex.quote(show)} {shlex.quote(tool)}; "
               f"echo tool-status=$?; exit $status")
    status, run_dir = boot(command, kernel=kernel, cwd=install, timeout=1800,
                           rwdirs=[os.path.join(kernel.build, "kselftest")])
    text = read_run_file(run_dir, "guest-output.txt")
    upstream, _, rest = text.partition(BUILDID_SUITE_MARK)
    ours, _, rest = rest.partition(BPF_SUITE_MARK)
    bpf, _, tool_out = rest.partition(TOOL_MARK)
    passed, failed = parse_tap(upstream)
    print(f"kselftest (upstream {', '.join(KSELFTEST_TARGETS)}): {passed} passed, {failed} failed")
    u_passed, u_failed = parse_test_progs(bpf)
    print(f"upstream BPF selftests ({', '.join(BPF_SELFTESTS)}): "
          f"{u_passed} passed, {u_failed} failed")
    if u_passed + u_failed == 0:
        info("the upstream BPF selftests reported nothing")
        u_failed += 1
    passed += u_passed
    failed += u_failed
    t_passed, t_failed = parse_tool_check(tool_out)
    print(f"buildid tool (PROCMAP_QUERY and fallback) against readelf -n: "
          f"{t_passed} passed, {t_failed} failed")
    passed += t_passed
    failed += t_failed
    b_passed, b_failed = parse_buildid_suite(ours)
    print(f"kselftest (buildid): {b_passed} passed, {b_failed} failed")
    if b_passed + b_failed == 0:
        info("the buildid kselftests reported nothing")
        b_failed += 1
    passed += b_passed
    failed += b_failed
    if passed + failed == 0 or status not in (0, 1):
        failed += 1
    return passed, failed


def stage_harness(kernel):
    """The VM runner carries the guest's status and fails on kernel splats."""
    passed = failed = 0
    status = run_vm("echo exiting 3; exit 3", kernel=kernel, cwd="/", quiet=True)
    ok = status == 3
    print(f"{'ok' if ok else 'not ok'} - guest exit status 3 comes back as 3 (got {status})")
    passed, failed = passed + ok, failed + (not ok)
    status, run_dir = boot("modprobe lkdtm && echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT",
                           kernel=kernel, cwd="/", quiet=True)
    ok = status != 0
    print(f"{'ok' if ok else 'not ok'} - a kernel WARNING fails the run (got {status})")
    passed, failed = passed + ok, failed + (not ok)
    status = run_vm("modprobe kmemleak-test", kernel=kernel, cwd="/", quiet=True)
    ok = status != 0
    print(f"{'ok' if ok else 'not ok'} - a kmemleak report fails the run (got {status})")
    passed, failed = passed + ok, failed + (not ok)
    # With CONFIG_STACKTRACE_BUILD_ID the WARNING's stack dump shows the build
    # IDs the kernel computed at boot (init_vmlinux_build_id) and at module
    # load (build_id_parse_buf); both must be what readelf finds in the files.
    log = read_run_file(run_dir, "dmesg.txt")
    for what, pattern, path in [
        ("vmlinux_build_id", r"CPU: \d+ UID: \d+ PID: .* ([0-9a-f]{40})$",
         os.path.join(kernel.build, "vmlinux")),
        ("lkdtm.ko build ID", r"\[lkdtm ([0-9a-f]{2,40})\]$",
         os.path.join(kernel.build, "drivers", "misc", "lkdtm", "lkdtm.ko")),
    ]:
        shown = [m.group(1) for m in (re.search(pattern, line.rstrip())
                                      for line in log.splitlines()) if m]
        want = readelf_build_id(path)
        ok = bool(shown) and want is not None and all(x == want for x in shown)
        print(f"{'ok' if ok else 'not ok'} - {what} in the stack dump matches readelf -n "
              f"({shown[0] if shown else 'not shown'} vs {want})")
        passed, failed = passed + ok, failed + (not ok)
    return passed, failed


def readelf_build_id(path):
    proc = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", proc.stdout)
    return m.group(1) if m else None


# Checkpatch types that do not apply to one file, each with the reason.
CHECKPATCH_EXCEPTIONS = {
    # The exported functions are defined in lib/buildid.c, which this file
    # #includes under other names, so no export can follow its definition.
    "lib/buildid_ref.c": ["EXPORT_SYMBOL"],
}


UNSAFE_USE = re.compile(r"\bunsafe\s*(\{|impl\b)")


def unsafe_without_safety_comment(path):
    """Line numbers of unsafe blocks and impls with no '// SAFETY:' comment above them.

    The comment must be in the comment lines right above the line, or above
    the start of the statement the block is part of (at most 6 lines up).
    """
    with open(path) as f:
        lines = f.read().splitlines()
    bad = []
    for i, line in enumerate(lines):
        code = line.split("//", 1)[0]
        if not UNSAFE_USE.search(code):
            continue
        ok = False
        for j in range(i - 1, max(i - 7, -1), -1):
            text = lines[j].strip()
            if "SAFETY:" in text:
                ok = True
                break
            if UNSAFE_USE.search(text.split("//", 1)[0]) or text.endswith(("}", ";")):
                break
        if not ok:
            bad.append(i + 1)
    return bad


def stage_lint(kernel):
    """rustfmt and checkpatch on the project's kernel files (clippy runs in the build)."""
    from .tree import project_files
    passed = failed = 0
    # The host crates under tools/ follow cargo fmt, not the kernel's style;
    # the kselftests are kernel C.
    files = [f for f in project_files(REPO)
             if not f.startswith("tools/") or f.startswith("tools/testing/selftests/")]
    rust = [os.path.join(REPO, f) for f in files if f.endswith(".rs")]
    checks = []
    if rust:
        checks.append(("rustfmt --check (kernel .rustfmt.toml)",
                       ["rustfmt", "--check", "--edition", "2021", "--config-path",
                        os.path.join(kernel.source.tree, ".rustfmt.toml")] + rust))
    checks.append(("cargo fmt --check (host crates)", ["cargo", "fmt", "--all", "--check"]))
    checkpatch = os.path.join(kernel.source.tree, "scripts", "checkpatch.pl")
    for f in files:
        if f.endswith((".c", ".h", ".rs")):
            ignore = ",".join(["FILE_PATH_CHANGES"] + CHECKPATCH_EXCEPTIONS.get(f, []))
            checks.append((f"checkpatch {f}",
                           ["perl", checkpatch, "--no-tree", "--quiet", "--show-types",
                            "--ignore", ignore, "-f", os.path.join(REPO, f)]))
    for name in sorted(os.listdir(os.path.join(REPO, "patches"))):
        checks.append((f"checkpatch patches/{name}",
                       ["perl", checkpatch, "--no-tree", "--quiet", "--no-signoff",
                        "--show-types", "--ignore", "FILE_PATH_CHANGES,COMMIT_MESSAGE",
                        os.path.join(REPO, "patches", name)]))
    for f in [f for f in files if f.endswith(".rs")]:
        bad = unsafe_without_safety_comment(os.path.join(REPO, f))
        ok = not bad
        print(f"{'ok' if ok else 'not ok'} - every unsafe block in {f} has a SAFETY comment"
              + ("" if ok else f" (lines {', '.join(map(str, bad))})"))
        passed, failed = passed + ok, failed + (not ok)
    elf = os.path.join(REPO, "rust", "kernel", "buildid", "elf.rs")
    with open(elf) as fh:
        code = "\n".join(line.split("//", 1)[0] for line in fh)
    ok = not re.search(r"\bunsafe\b", code)
    print(f"{'ok' if ok else 'not ok'} - the ELF parser has no unsafe code")
    passed, failed = passed + ok, failed + (not ok)
    for name, cmd in checks:
        proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        ok = proc.returncode == 0 and not proc.stdout.strip()
        print(f"{'ok' if ok else 'not ok'} - {name}")
        if not ok:
            sys.stdout.write(proc.stdout)
        passed, failed = passed + ok, failed + (not ok)
    return passed, failed


STAGES = ["host", "build", "lint", "harness", "kunit", "kselftest"]


def run_tests(stages=None):
    stages = stages or STAGES
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise HarnessError(f"unknown test stage(s): {', '.join(unknown)}; known: {STAGES}")
    total_passed = total_failed = 0
    results = []
    kernel = None
    for name in STAGES:
        if name not in stages:
            continue
        banner(name)
        t0 = time.monotonic()
        try:
            if name == "host":
                # The differential tests compile the tree's own lib/buildid.c.
                source = Kernel().source
                source.ensure_pristine()
                os.environ["BUILDID_C_SOURCE"] = os.path.join(source.pristine, "lib",
                                                              "buildid.c")
                p, f = stage_host()
            elif name == "build":
                kernel = Kernel()
                kernel.prepare_tree()
                kernel.configure()
                kernel.build_all()
                p, f = 0, 0
            else:
                kernel = kernel or Kernel()
                p, f = globals()["stage_" + name](kernel)
        except HarnessError as e:
            print(f"error: {e}", file=sys.stderr)
            p, f = 0, 1
            if name == "build":
                results.append((name, p, f, time.monotonic() - t0))
                total_failed += 1
                break
        results.append((name, p, f, time.monotonic() - t0))
        total_passed += p
        total_failed += f
    print()
    for name, p, f, dt in results:
        print(f"  {name:10s} {p:5d} passed {f:4d} failed  ({dt:.0f} s)")
    print(f"{total_passed} passed, {total_failed} failed", flush=True)
    return 0 if total_failed == 0 else 1


BENCH_LARGE_ELF = "/usr/bin/qemu-system-x86_64"
BENCH_DOC = os.path.join(REPO, "BENCHMARKS.md")


def machine_description():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} host CPUs"


def run_bench():
    """Build the benchmark kernel, run buildid_bench in it, write BENCHMARKS.md."""
    from .kbuild import BENCH_FRAGMENT, FRAGMENT, merge_fragments
    fragment = merge_fragments(FRAGMENT, BENCH_FRAGMENT,
                               os.path.join(CACHE, "build", "bench.config"))
    kernel = Kernel(fragment=fragment, flavor="bench")
    kernel.prepare_tree()
    kernel.configure()
    kernel.build_all()
    kernel.make("headers")
    build_buildid_kselftests(kernel)
    bench = os.path.join(kernel.build, "kselftest", "buildid", "buildid_bench")
    script = os.path.join(HARNESS, "guest", "bench.sh")
    status, run_dir = boot(f"sh {shlex.quote(script)} {shlex.quote(bench)} {BENCH_LARGE_ELF}",
                           kernel=kernel, cwd="/", timeout=1800)
    results = read_run_file(run_dir, "guest-output.txt")
    if status != 0 or "###" not in results:
        raise HarnessError(f"the benchmark failed (status {status}), see {run_dir}")
    tables = results[results.index("###"):].rstrip() + "\n"
    with open(BENCH_DOC, "w") as f:
        f.write(BENCH_HEADER.format(
            date=time.strftime("%Y-%m-%d"), machine=machine_description(),
            kernel=kernel.kernel_version(), large=BENCH_LARGE_ELF) + tables)
    print(tables)
    info(f"wrote {BENCH_DOC}")
    return 0


BENCH_HEADER = """# Benchmarks

Written by `make bench` on {date}; every ratio comes from one run, with both
sides measured alternately in the same boot.

- **Kernel**: Linux {kernel} with `kernel/configs/buildid.config` minus the
  debug options (`kernel/configs/buildid-bench.config`: no KASAN, lockdep,
  kmemleak, `DEBUG_VM`, atomic-sleep checks or Rust overflow checks).
- **Machine**: QEMU under TCG (no KVM: nested virtualization does not work
  here), 2 vCPUs, 2 GiB, on {machine}.  TCG emulates every instruction, so
  absolute times are far above native ones; ratios between two code paths
  doing the same work are what these numbers are for.
- **Method**: `tools/testing/selftests/buildid/buildid_bench.c` in the guest.
  The parser rows use the `BUILDID_IOC_BENCH` ioctl of `/dev/buildid`
  (`samples/rust/rust_buildid.rs`), which runs one entry point N times in the
  kernel and returns the time: the Rust implementation, or the C one of
  `lib/buildid.c` built as `build_id_ref_*()` (`CONFIG_BUILDID_C_REFERENCE`).
  Files live on an ext4 image so that "evicted" can drop the page cache
  before each parse.  "Large binary" is `{large}`.
- **What differs between the implementations**: with cached data the
  sleepable C path calls `__kernel_read()` for every fetch of at most 64
  bytes, where the Rust one copies from the page cache.  Both read the ELF
  fields in place in the folio; the Rust reader loads each field by value
  with one volatile load (no Rust reference into memory that a writer may
  change) and compiles the parse for each ELF class with its fetches
  inlined, but reaches the folio through out-of-line C helpers (uptodate
  test, size, address, reference drop), where C uses inline functions.
  Evicted data costs a read from the block device either way.

"""


def run_demo():
    kernel = Kernel()
    kernel.prepare_tree()
    kernel.configure()
    kernel.build_all()
    tool = build_tool()
    script = os.path.join(HARNESS, "guest", "show-buildids.sh")
    return run_vm(f"sh {shlex.quote(script)} {shlex.quote(tool)}", kernel=kernel, cwd="/")
