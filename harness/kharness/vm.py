# SPDX-License-Identifier: GPL-2.0
"""Boot the built kernel under virtme-ng (TCG) and run one command as root.

virtme-ng does not reliably hand back the guest command's exit status (it
may fall back to a console script and exit 255), so the guest writes its
status, its kernel log and a kmemleak scan into a shared run directory and
the host reads them from there.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from .common import CACHE, PROGRESS_SECONDS, VNG, HarnessError, info
from .kbuild import Kernel

RUNS = os.path.join(CACHE, "runs")
KEEP_RUNS = 20

# Kernel log lines that fail a run: each is a splat the debug options of the
# test kernel exist to catch.
SPLAT_PATTERNS = [
    r"WARNING:",
    r"\bBUG:",
    r"\bBUG\b.*\bat\b",
    r"Oops",
    r"general protection fault",
    r"Kernel panic",
    r"KASAN",
    r"UBSAN",
    r"possible circular locking dependency",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"suspicious RCU usage",
    r"lock held when returning to user space",
    r"sleeping function called from invalid context",
    r"kmemleak: \d+ new suspected memory leaks",
    r"unreferenced object 0x",
    r"rust_panic|panicked at",
    r"INFO: task .* blocked for more than",
    r"RCU stall|INFO: \w+ (self-)?detected stalls? on CPU",
    # kmemleak turning itself off: from then on, no leak is reported.
    r"kmemleak: (Kernel memory leak detector disabled|Cannot allocate|Memory pool empty)",
    r"------------\[ cut here \]------------",
]
SPLAT_RE = re.compile("|".join(f"(?:{p})" for p in SPLAT_PATTERNS))

GUEST_WRAPPER = r"""#!/bin/sh
# Runs inside the guest.  Everything the host needs ends up in $RUN.
RUN={run}
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
cd {cwd} || exit 125
export PATH="{path}"
export BUILDID_IN_VM=1
# The command's output goes to a file the host follows while the guest runs:
# virtme-ng's script I/O ports are not always found in time under TCG.
(sh -c {cmd} </dev/null; echo $? > "$RUN/status") > "$RUN/guest-output.txt" 2>&1
status=$(cat "$RUN/status")
if [ -w /sys/kernel/debug/kmemleak ]; then
	# kmemleak reports an object only if it was already 5 s old when the
	# previous scan started: let the command's objects age, scan twice.
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak 2>/dev/null
	echo scan > /sys/kernel/debug/kmemleak 2>/dev/null
	cat /sys/kernel/debug/kmemleak > "$RUN/kmemleak.txt" 2>/dev/null
fi
dmesg > "$RUN/dmesg.txt"
sync
exit "$status"
"""


def scan_log(text):
    """Lines of a kernel log that indicate a kernel problem."""
    return [line for line in text.splitlines() if SPLAT_RE.search(line)]


class Follower:
    """Copies what the guest appends to a file to our stdout.

    With times set, also appends each complete line to that file, after
    the seconds since t0 at which it was seen: where a long run spends its
    time (within PROGRESS_SECONDS' polling, 0.2 s).
    """

    def __init__(self, path, times=None, t0=None):
        self.path = path
        self.offset = 0
        self.times = times
        self.t0 = time.monotonic() if t0 is None else t0
        self.partial = b""

    def pump(self):
        """Copy what is new; True if there was something."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return False
        if data:
            self.offset += len(data)
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            self.stamp(data)
        return bool(data)

    def stamp(self, data):
        if not self.times:
            return
        *lines, self.partial = (self.partial + data).split(b"\n")
        if lines:
            elapsed = time.monotonic() - self.t0
            with open(self.times, "ab") as f:
                for line in lines:
                    f.write(b"%7.1f " % elapsed + line + b"\n")


def new_run_dir():
    os.makedirs(RUNS, exist_ok=True)
    runs = sorted(d for d in os.listdir(RUNS) if d.startswith("run-"))
    for old in runs[:-KEEP_RUNS]:
        shutil.rmtree(os.path.join(RUNS, old), ignore_errors=True)
    path = os.path.join(RUNS, time.strftime("run-%Y%m%d-%H%M%S-") + str(os.getpid()))
    n = 0
    while os.path.exists(f"{path}.{n}"):
        n += 1
    path = f"{path}.{n}"
    os.makedirs(path)
    return path


class Boot:
    """What one VM run produced: the guest's status and the kernel's splats, apart.

    status is None when the guest never reported one (it died, hung or
    never started); splats lists the kernel log lines that show a kernel
    problem, whatever the status.
    """

    def __init__(self, run_dir, status, timed_out, splats, timeout=None, vng_status=None):
        self.run_dir = run_dir
        self.status = status
        self.timed_out = timed_out
        self.splats = splats
        self.timeout = timeout
        self.vng_status = vng_status

    def file(self, name):
        """A file the guest left in its run directory, or "" if it did not."""
        try:
            with open(os.path.join(self.run_dir, name), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def failures(self, want_status=0):
        """Why this run fails: no status, a timeout, a status other than want_status, splats."""
        why = []
        if self.timed_out:
            why.append(f"guest timed out after {self.timeout} s")
        elif self.status is None:
            why.append(f"guest died or never ran: no exit status (vng exited {self.vng_status})")
        elif want_status is not None and self.status != want_status:
            why.append(f"guest command exited {self.status}")
        why += [f"kernel log: {line}" for line in self.splats]
        return why


LOG_FILES = ("dmesg.txt", "console.log", "kmemleak.txt")


def read_logs(run_dir):
    """{name: text} of the logs a guest left in its run directory."""
    logs = {}
    for name in LOG_FILES:
        path = os.path.join(run_dir, name)
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                logs[name] = f.read()
    return logs


def run_splats(logs, reported, kmemleak_expected):
    """The splats of a run's logs, each once, as "file: line".

    A guest that reported its status on a kernel with kmemleak must have
    left a kmemleak scan: without it, leaks would go unchecked.
    """
    problems = []
    seen = set()
    for name in LOG_FILES:
        for line in scan_log(logs.get(name, "")):
            key = re.sub(r"^\[[ \d.]+\]\s*", "", line)
            if key not in seen:
                seen.add(key)
                problems.append(f"{name}: {line.strip()}")
    if reported and kmemleak_expected and "kmemleak.txt" not in logs:
        problems.append("kmemleak.txt: missing, so leaks went unchecked "
                        "(the kernel has CONFIG_DEBUG_KMEMLEAK)")
    return problems


def kmemleak_enabled(kernel):
    try:
        with open(os.path.join(kernel.build, ".config")) as f:
            return "CONFIG_DEBUG_KMEMLEAK=y\n" in f.read()
    except FileNotFoundError:
        return False


def run_vm(command, **kwargs):
    """Boot, run command (a shell string); the status for the command line.

    The guest's status when it reported one and the kernel log is clean;
    124 when it never reported; 1 when it succeeded but the log has a splat.
    """
    result = boot(command, **kwargs)
    if result.status is None:
        return 124
    return result.status or (1 if result.splats else 0)


def boot(command, timeout=600, memory="2G", append=(), check_log=True, cwd=None,
         kernel=None, quiet=False, rwdirs=()):
    """Boot, run command, return a Boot."""
    kernel = kernel or Kernel()
    if not os.path.exists(kernel.bzimage()):
        raise HarnessError(f"no kernel image at {kernel.bzimage()}: run 'make build'")
    run = new_run_dir()
    wrapper = os.path.join(run, "guest.sh")
    with open(wrapper, "w") as f:
        f.write(GUEST_WRAPPER.format(run=shlex.quote(run),
                                     cwd=shlex.quote(cwd or os.getcwd()),
                                     path=os.environ.get("PATH", "/usr/bin:/bin"),
                                     cmd=shlex.quote(command)))
    # Console output (boot log, splats) goes to the run directory so a guest
    # that dies before writing dmesg.txt still leaves its log behind.
    console = os.path.join(run, "console.log")
    # --force-9p: the root is 9p on every machine (vng would use a
    # virtiofsd it finds installed, which changes what the tests read).
    cmd = [VNG, "--run", kernel.build, "--disable-kvm", "--force-9p", "--cpus", "2",
           "--memory", memory, "--user", "root", "--rwdir", run, "--verbose"]
    for d in rwdirs:
        cmd += ["--rwdir", d]
    for a in append:
        cmd += ["--append", a]
    cmd += ["--exec", f"sh {wrapper}"]
    if not quiet:
        info(f"booting {kernel.bzimage()} (TCG), run dir {run}")
    t0 = time.monotonic()
    guest_output = os.path.join(run, "guest-output.txt")
    timed_out = False
    with open(console, "wb") as log, open(os.path.join(run, "vng-stdout.txt"), "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=log,
                                start_new_session=True)
        follower = Follower(guest_output, os.path.join(run, "guest-output-times.txt"), t0)
        last_news = t0
        while proc.poll() is None:
            now = time.monotonic()
            if follower.pump():
                last_news = now
            elif now - last_news >= PROGRESS_SECONDS:
                # A quiet guest (booting, or a long test case) still shows
                # that it is alive.
                info(f"guest running, {now - t0:.0f} s of at most {timeout} s")
                last_news = now
            if now - t0 > timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            time.sleep(0.2)
        follower.pump()
    elapsed = time.monotonic() - t0

    status_file = os.path.join(run, "status")
    status = None
    if os.path.exists(status_file):
        try:
            with open(status_file) as f:
                status = int(f.read().strip())
        except ValueError:
            status = None
    logs = read_logs(run)
    problems = run_splats(logs, status is not None, kmemleak_enabled(kernel)) if check_log else []
    result = Boot(run, None if timed_out else status, timed_out, problems, timeout,
                  proc.returncode)
    if timed_out:
        info(f"guest timed out after {timeout} s; logs in {run}")
    elif status is None:
        info(f"guest did not report an exit status (vng exited {proc.returncode}); "
             f"logs in {run}")
        console_text = logs.get("console.log", "")
        tail = "\n".join(console_text.splitlines()[-30:])
        if tail:
            print(tail, file=sys.stderr)
    if problems:
        info("kernel log shows problems:\n  " + "\n  ".join(problems[:20]))
        info(f"full kernel log: {os.path.join(run, 'dmesg.txt')}")
    elif status is not None and not quiet:
        info(f"guest exited {status} after {elapsed:.0f} s; kernel log clean ({run})")
    return result
