"""NVE energy drift of LAMMPS runs: the least-squares slope of the total energy against time.

    python drift.py LOG [LOG ...]

Each LOG is a LAMMPS log whose last run printed `thermo 1` columns with Step and TotEng (metal
units; timestep read from the log, default 0.001 ps). Prints a Markdown row per log: atoms,
steps, the slope in meV/atom/ps, the largest excursion of TotEng from its first value in
meV/atom, and the mean temperature. A log without such a run is reported, not skipped.
"""

from __future__ import annotations

import re
import sys


def last_run(path: str) -> tuple[int, float, list[list[float]], list[str]]:
    atoms, dt, header, rows, runs = 0, 0.001, [], [], []
    with open(path) as f:
        for line in f:
            words = line.split()
            if m := re.match(r"\s*timestep\s+(\S+)", line):
                dt = float(m.group(1))
            elif m := re.search(r"Loop time of \S+ on \d+ procs for (\d+) steps with (\d+) atoms", line):
                atoms = int(m.group(2))
                runs.append((header, rows))
                header, rows = [], []
            elif words[:1] == ["Step"]:
                header, rows = words, []
            elif header and len(words) == len(header):
                try:
                    rows.append([float(w) for w in words])
                except ValueError:
                    pass
    header, rows = runs[-1] if runs else ([], [])
    return atoms, dt, rows, header


def main(logs: list[str]) -> int:
    print("| log | atoms | steps | drift (meV/atom/ps) | largest excursion (meV/atom) | mean T (K) |")
    print("|---|---|---|---|---|---|")
    for log in logs:
        try:
            atoms, dt, rows, header = last_run(log)
            step, energy, temp = header.index("Step"), header.index("TotEng"), header.index("Temp")
        except (OSError, ValueError) as e:
            print(f"| {log} | no NVE run with Step, Temp and TotEng ({e}) | | | | |")
            continue
        if len(rows) < 3 or atoms == 0:
            print(f"| {log} | the run stopped after {len(rows)} thermo rows | | | | |")
            continue
        t = [r[step] * dt for r in rows]
        e = [r[energy] for r in rows]
        tm, em = sum(t) / len(t), sum(e) / len(e)
        slope = sum((a - tm) * (b - em) for a, b in zip(t, e)) / sum((a - tm) ** 2 for a in t)
        excursion = max(abs(b - e[0]) for b in e)
        mean_t = sum(r[temp] for r in rows) / len(rows)
        print(f"| {log} | {atoms} | {int(rows[-1][step] - rows[0][step])} | {1e3 * slope / atoms:.3g} "
              f"| {1e3 * excursion / atoms:.3g} | {mean_t:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else (print(__doc__, file=sys.stderr) or 2))
