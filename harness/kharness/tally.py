# SPDX-License-Identifier: GPL-2.0
"""The one way the harness counts and reports checks.

Every test stage returns a Tally; 'make test' and 'make mutants' add them
up and end with the same "N passed, N failed" line.
"""


def banner(name):
    print(f"\n===== {name} =====", flush=True)


class Tally:
    """The checks of one stage, each printed as one line; failures keep their reason."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def check(self, ok, what, quiet_ok=False):
        if not ok or not quiet_ok:
            print(f"{'ok' if ok else 'not ok'} - {what}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(what)
        return ok

    def add(self, passed, failed):
        """Counts of checks that another program ran and reported itself."""
        self.passed += passed
        self.failed += failed

    def boot(self, boot, what, want_status=0):
        """A VM run: every reason it failed (no status, timeout, each splat) is a failure."""
        reasons = boot.failures(want_status)
        for reason in reasons:
            self.check(False, f"{what}: {reason}")
        if not reasons:
            self.check(True, f"{what}: guest exited {boot.status}, kernel log clean")

    @property
    def counts(self):
        return self.passed, self.failed

    def total(self):
        """Print the final "N passed, N failed" line; the exit status it means."""
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1
