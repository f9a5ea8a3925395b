"""Pass/fail tally of a Python test script: one line per check, the count at the end."""
from __future__ import annotations


class Results:
    def __init__(self) -> None:
        self.passed = self.failed = 0

    def report(self, ok: bool, name: str, detail: str) -> None:
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def finish(self) -> int:
        """Prints `N passed, N failed`; the exit status: 1 if a check failed or none ran (a script
        whose loops all ran empty checked nothing, and must not read as a pass)."""
        if self.passed + self.failed == 0:
            print("FAIL: no check ran")
            self.failed += 1
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1
