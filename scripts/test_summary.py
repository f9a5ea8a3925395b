#!/usr/bin/env python3
"""What a ctest stage ran, and whether each skip is one this kind of machine may have.

ctest counts a skipped GoogleTest as passed and runs an MPI test program as a single test, so its
own summary can hide a regression that turns tests into skips. Every test program of the suite
prints its skips and counts (unittest/support/skip_report.h):

    DISTSPEC-SKIP <Suite.Test>: <reason>
    DISTSPEC-COUNTS tests <ran> skipped <n> failed <n> comparisons <n>

and the Python tests print `DISTSPEC-SKIP <test>: <reason>` before they exit 77. This reads them
from the JUnit report of a ctest run (`ctest --output-junit FILE`, with the test output kept whole:
`--test-output-size-passed` and `--test-output-size-failed`), prints each skipped test with its
reason, the counts by reason, and the tests, comparisons and skips; and fails when a test skipped
for a reason that unittest/allowed_skips.txt does not allow on this kind of machine, or a ctest
test skipped without saying why.

    test_summary.py STAGE JUNIT [--kind cpu|gpu] [--record FILE]   one stage (appends to FILE)
    test_summary.py --total FILE [--kind ...]                       the stages FILE recorded

The machine kind is DISTSPEC_MACHINE_KIND, else `gpu` where nvidia-smi lists a GPU, else `cpu`;
`,no_python` is added under DISTSPEC_SKIP_PYTHON=1.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ALLOWED = HERE.parent / "unittest" / "allowed_skips.txt"
SKIP_LINE = re.compile(r"^DISTSPEC-SKIP (\S+): (.*)$")
COUNTS_LINE = re.compile(r"^DISTSPEC-COUNTS tests (\d+) skipped (\d+) failed (\d+) comparisons (\d+)$")


def machine_kind() -> str:
    """cpu or gpu, and no_python where DISTSPEC_SKIP_PYTHON=1 left the Python environments out."""
    kind = os.environ.get("DISTSPEC_MACHINE_KIND", "").strip()
    if not kind:
        kind = "cpu"
        smi = shutil.which("nvidia-smi")
        if smi:
            listed = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
            if listed.returncode == 0 and "GPU" in listed.stdout:
                kind = "gpu"
    if os.environ.get("DISTSPEC_SKIP_PYTHON") == "1":
        kind += ",no_python"
    return kind


def allowed_patterns(kind: str, path: Path = ALLOWED) -> list[re.Pattern[str]]:
    """The allow-list's regular expressions for this kind of machine (lines `KIND REGEX`, `any`
    for every kind; `#` starts a comment)."""
    patterns = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        kinds, _, regex = line.partition(" ")
        if not regex.strip():
            sys.exit(f"{path}:{number}: expected 'KIND REGEX' (KIND: cpu, gpu or any, comma-separated)")
        if kinds == "any" or set(kind.split(",")) & set(kinds.split(",")):
            patterns.append(re.compile(regex.strip()))
    return patterns


def read_stage(junit: Path) -> dict:
    """Tests, comparisons and skips of one ctest run, from its JUnit report."""
    stage = {"ctest_tests": 0, "ctest_failed": 0, "tests": 0, "comparisons": 0, "skips": []}
    root = ET.parse(junit).getroot()
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        status = case.get("status", "")
        output = case.findtext("system-out") or ""
        stage["ctest_tests"] += 1
        stage["ctest_failed"] += case.find("failure") is not None or status == "fail"
        skips = [m.groups() for m in map(SKIP_LINE.match, output.splitlines()) if m]
        counts = [tuple(map(int, m.groups())) for m in map(COUNTS_LINE.match, output.splitlines()) if m]
        ctest_skipped = case.find("skipped") is not None or status == "notrun"
        for test, reason in skips:
            stage["skips"].append({"ctest": name, "test": test, "reason": reason.strip()})
        if ctest_skipped and not skips:
            why = case.find("skipped")
            stage["skips"].append({"ctest": name, "test": name,
                                   "reason": "skipped without a DISTSPEC-SKIP line ("
                                             + (why.get("message", "") if why is not None else status) + ")"})
        if counts:
            stage["tests"] += sum(c[0] - c[1] for c in counts)
            stage["comparisons"] += sum(c[3] for c in counts)
        elif not ctest_skipped:
            stage["tests"] += 1  # a test that is not a GoogleTest program: one check
    return stage


def report(title: str, stage: dict, patterns: list[re.Pattern[str]], kind: str) -> int:
    """Prints the stage's summary; returns how many skips the allow-list does not cover."""
    print(f"\n--- {title}: {stage['tests']} tests ran ({stage['ctest_tests']} ctest tests, "
          f"{stage['ctest_failed']} failed), {stage['comparisons']} comparisons, {len(stage['skips'])} skipped")
    by_reason = collections.Counter(s["reason"] for s in stage["skips"])
    disallowed = 0
    for skip in sorted(stage["skips"], key=lambda s: (s["reason"], s["ctest"], s["test"])):
        ok = any(p.search(skip["reason"]) for p in patterns)
        disallowed += not ok
        print(f"  skipped{'' if ok else ' (NOT ALLOWED)'} {skip['ctest']} {skip['test']}: {skip['reason']}")
    if by_reason:
        print("  skips by reason:")
        for reason, n in by_reason.most_common():
            print(f"  {n:6d}  {reason}")
    if disallowed:
        print(f"  {disallowed} skip(s) for a reason {ALLOWED.relative_to(HERE.parent)} does not allow on a "
              f"'{kind}' machine: each hides what the test checks. Make the test run here, or, if the reason is "
              "a fact of this kind of machine, add it to that list with why.")
    return disallowed


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stage", nargs="?", help="the stage's name, for the summary")
    p.add_argument("junit", nargs="?", type=Path, help="ctest's --output-junit file")
    p.add_argument("--record", type=Path, help="append the stage's numbers to this file (for --total)")
    p.add_argument("--total", type=Path, help="summarise the stages this file recorded")
    p.add_argument("--kind", default=None, help="machine kind (default: DISTSPEC_MACHINE_KIND or detected)")
    args = p.parse_args(argv)
    kind = args.kind or machine_kind()
    patterns = allowed_patterns(kind)
    if args.total:
        stages = [json.loads(line) for line in args.total.read_text().splitlines() if line.strip()] \
            if args.total.is_file() else []
        total = {"ctest_tests": 0, "ctest_failed": 0, "tests": 0, "comparisons": 0, "skips": []}
        for stage in stages:
            for key in ("ctest_tests", "ctest_failed", "tests", "comparisons"):
                total[key] += stage[key]
            total["skips"] += [dict(s, ctest=f"[{stage['name']}] {s['ctest']}") for s in stage["skips"]]
        return 1 if report(f"total of {len(stages)} ctest stage(s), '{kind}' machine", total, patterns, kind) else 0
    if not args.stage or not args.junit:
        p.error("give STAGE and JUNIT, or --total FILE")
    if not args.junit.is_file():
        print(f"test_summary.py: {args.junit}: no JUnit report (did ctest run with --output-junit?)")
        return 1
    stage = read_stage(args.junit)
    disallowed = report(f"{args.stage} ('{kind}' machine)", stage, patterns, kind)
    if args.record:
        with args.record.open("a") as out:
            out.write(json.dumps(dict(stage, name=args.stage)) + "\n")
    return 1 if disallowed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
