#!/usr/bin/env python3
"""scripts/test_summary.py on JUnit reports made up here: it counts what the DISTSPEC-SKIP and
DISTSPEC-COUNTS lines say, passes skips the allow-list has for the machine kind, and fails the
others, a ctest skip that gives no reason among them. Prints one line per check and
`N passed, N failed` last."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test_summary.py"


def junit(cases: list[tuple[str, str, str]]) -> str:
    """A ctest JUnit report: (name, status run|fail|notrun, output) per test."""
    rows = []
    for name, status, output in cases:
        inner = '<skipped message="SKIP_RETURN_CODE=77"/>' if status == "notrun" else ""
        inner += '<failure message="Failed"/>' if status == "fail" else ""
        rows.append(f'<testcase name="{name}" classname="{name}" time="1" status="{status}">{inner}'
                    f"<system-out>{escape(output)}</system-out></testcase>")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x" tests="{len(cases)}">{"".join(rows)}</testsuite>\n'


def summary(folder: Path, cases: list[tuple[str, str, str]], kind: str) -> tuple[int, str]:
    report = folder / "junit.xml"
    report.write_text(junit(cases))
    run = subprocess.run([sys.executable, str(SCRIPT), "stage", str(report), "--kind", kind,
                          "--record", str(folder / "stages.jsonl")], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout + run.stderr


MPI_PROGRAM = ("[==========] Running 3 tests\n"
               "DISTSPEC-SKIP Data/Cases.AgreeWithTheirReferences/dftd3_ne_newton_on: this LAMMPS has no pair "
               "dispersion/d3, which every reference of the case needs\n"
               "DISTSPEC-COUNTS tests 3 skipped 1 failed 0 comparisons 7\n")
GPU_SKIP = "DISTSPEC-SKIP GpuShare.X: no GPU: the CUDA driver sees no device\nDISTSPEC-COUNTS tests 1 skipped 1 failed 0 comparisons 0\n"
UNLISTED = "DISTSPEC-SKIP Foo.Bar: device cuda cannot run: cudaSetDevice failed\nDISTSPEC-COUNTS tests 1 skipped 1 failed 0 comparisons 0\n"


def main() -> int:
    passed = failed = 0

    def check(ok: bool, name: str, detail: str) -> None:
        nonlocal passed, failed
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail if not ok else 'as expected'}")
        passed, failed = passed + ok, failed + (not ok)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rc, out = summary(folder, [("integration.np2", "run", MPI_PROGRAM), ("gpu.np1", "run", GPU_SKIP),
                                   ("torch.export", "run", "12 passed, 0 failed\n")], "cpu")
        check(rc == 0, "allowed skips on a cpu machine pass", out)
        check("3 tests ran" in out and "7 comparisons" in out and "2 skipped" in out,
              "tests (gtest tests not skipped, plus other ctest tests), comparisons and skips counted", out)
        check("no GPU: the CUDA driver sees no device" in out and "GpuShare.X" in out, "each skip with its reason", out)
        rc, out = summary(folder, [("gpu.np1", "run", GPU_SKIP)], "gpu")
        check(rc == 1 and "NOT ALLOWED" in out, "no GPU on a gpu machine fails", out)
        rc, out = summary(folder, [("x.np1", "run", UNLISTED)], "cpu")
        check(rc == 1 and "NOT ALLOWED" in out, "a reason not on the list fails", out)
        rc, out = summary(folder, [("torch.fixtures", "notrun", "some output\n")], "cpu")
        check(rc == 1 and "without a DISTSPEC-SKIP line" in out, "a ctest skip with no reason fails", out)
        rc, out = summary(folder, [("torch.fixtures", "notrun", "DISTSPEC-SKIP make_fixtures.py: no Python "
                                    "environment with torch, nvalchemi: DISTSPEC_PYTHON is unset\n")], "cpu,no_python")
        check(rc == 0, "DISTSPEC_SKIP_PYTHON=1's skip is allowed where asked for", out)
        total = subprocess.run([sys.executable, str(SCRIPT), "--total", str(folder / "stages.jsonl"), "--kind", "cpu"],
                               capture_output=True, text=True, check=False)
        check(total.returncode == 1 and "total of 5 ctest stage(s)" in total.stdout,
              "the total sums the stages and fails on any stage's skip not allowed", total.stdout)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
