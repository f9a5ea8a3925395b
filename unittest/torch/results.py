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
