"""bench/accelerators' results as one CSV, and the README table and plot made from it.

  results.py csv RUN_FOLDER... [--commit SHA]    > results.csv
      One row per model, accelerator, GPU and size, from the run folders that nequip_run.sh
      (BENCH_OUT/nequip, BENCH_OUT/allegro) or run.sh (its BENCH_OUT) wrote: DISTSPEC's seconds per step (LAMMPS'
      loop time of the timed run) and peak GPU memory (nvidia-smi samples), the model's own
      fastest call at the same size (the fastest accelerator of its model_call.log) and the ratio
      own / DISTSPEC (above 1: DISTSPEC is faster), and the 512-atom force checks.
  results.py table CSV
      The table of CSV, in markdown (what readme writes into the README).
  results.py readme CSV README [--plot PNG]
      Replaces the rows between README's `<!-- results.csv begin -->` and `<!-- results.csv end
      -->` with the table of CSV (the GPU and commit named above it) and draws PNG with gnuplot.

A run folder holds: meta (key=value lines: model, accelerators, own_call), machine.txt (the GPU),
log.ACC.N and memory.ACC.N of each timed size, model_call.log (markdown rows: atoms,
accelerator, seconds, peak GiB; or mace_calculator.py's rows), forces.ACC.{1,2} and forces.ref (report.py's forms).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import dump_forces, peak_gib, ref_forces, timing  # noqa: E402

FIELDS = ["model", "accelerator", "gpu", "atoms", "seconds_per_step", "peak_gib", "own_call", "own_seconds",
          "own_peak_gib", "own_over_distspec", "forces_vs_reference", "ranks2_vs_ranks1", "commit"]
BEGIN, END = "<!-- results.csv begin -->", "<!-- results.csv end -->"


def meta(folder: str) -> dict:
    path = os.path.join(folder, "meta")
    if not os.path.exists(path):
        sys.exit(f"results.py: {path} is missing (key=value lines: model, accelerators, own_call); "
                 "run nequip_run.sh, or write it beside run.sh's logs")
    pairs = (line.split("=", 1) for line in open(path).read().splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


def own_calls(folder: str) -> dict[int, tuple[float, str, str]]:
    """atoms -> (seconds, accelerator, peak GiB) of the fastest call of model_call.log; the
    accelerator is named only where the log holds more than one."""
    best: dict[int, tuple[float, str, str]] = {}
    named = set()
    path = os.path.join(folder, "model_call.log")
    if not os.path.exists(path):
        return best
    peak_column = 3  # sevennet_model_call.py's; mace_calculator.py's header puts it after `s per calculate`
    for line in open(path).read().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:1] == ["atoms"]:
            peak_column = next((i for i, c in enumerate(cells) if c.startswith("peak GiB")), peak_column)
        if len(cells) <= peak_column or not cells[0].isdigit():
            continue
        try:
            seconds = float(cells[2])
        except ValueError:
            continue  # out of memory, fails
        atoms = int(cells[0])
        named.add(cells[1])
        if atoms not in best or seconds < best[atoms][0]:
            best[atoms] = (seconds, cells[1], cells[peak_column])
    if len(named) == 1:
        best = {atoms: (seconds, "", peak) for atoms, (seconds, _, peak) in best.items()}
    return best


def own_label(m: dict, own) -> str:
    name = m.get("own_call", "own call")
    return f"{name} ({own[1]})" if own and own[1] else name


def max_diff(a: str, b: str, reference: bool = False) -> str:
    """Largest force component difference between two dumps (b: report.py's reference form)."""
    if not (os.path.exists(a) and os.path.exists(b)):
        return ""
    got, ref = dump_forces(a), (ref_forces(b)[1] if reference else dump_forces(b))
    return "%.2e" % max(abs(x - y) for i in ref for x, y in zip(got[i], ref[i]))


def gpu_name(folder: str) -> str:
    path = os.path.join(folder, "machine.txt")
    return open(path).read().splitlines()[0].split(",")[0].strip() if os.path.exists(path) else "unknown"


def rows_of(folder: str, commit: str) -> list[dict]:
    m = meta(folder)
    return [row for acc in m["accelerators"].split() for row in accelerator_rows(folder, m, acc, commit)]


def accelerator_rows(folder: str, m: dict, acc: str, commit: str) -> list[dict]:
    calls = own_calls(folder)
    checks = {"forces_vs_reference": max_diff(os.path.join(folder, f"forces.{acc}.1"),
                                              os.path.join(folder, "forces.ref"), reference=True),
              "ranks2_vs_ranks1": max_diff(os.path.join(folder, f"forces.{acc}.2"),
                                           os.path.join(folder, f"forces.{acc}.1"))}
    cells = sorted({int(x.group(1)) for f in os.listdir(folder)
                    for x in [re.match(r"log\.%s\.(\d+)$" % re.escape(acc), f)] if x})
    rows = []
    for n in cells:
        atoms = 8 * n ** 3
        t, peak = timing(folder, acc, n), peak_gib(folder, acc, n)
        own = calls.get(atoms)
        row = {"model": m["model"], "accelerator": acc, "gpu": gpu_name(folder), "atoms": atoms,
               "seconds_per_step": "%.4f" % t if isinstance(t, float) else (t or "not run"),
               "peak_gib": "%.1f" % peak if peak is not None and isinstance(t, float) else "",
               "own_call": own_label(m, own),
               "own_seconds": "%.4f" % own[0] if own else "", "own_peak_gib": own[2] if own else "",
               "own_over_distspec": "%.2f" % (own[0] / t) if own and isinstance(t, float) else "",
               "commit": commit, **checks}
        rows.append(row)
    for atoms in sorted(set(calls) - {8 * n ** 3 for n in cells}):
        own = calls[atoms]
        rows.append({"model": m["model"], "accelerator": acc, "gpu": gpu_name(folder), "atoms": atoms,
                     "seconds_per_step": "not run", "peak_gib": "", "own_call": own_label(m, own),
                     "own_seconds": "%.4f" % own[0], "own_peak_gib": own[2], "own_over_distspec": "",
                     "commit": commit, **checks})
    return sorted(rows, key=lambda r: r["atoms"])


def write_csv(args) -> int:
    out = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    out.writeheader()
    for folder in args.folders:
        for row in rows_of(folder, args.commit):
            out.writerow(row)
    return 0


def table(rows: list[dict]) -> list[str]:
    gpus = sorted({r["gpu"] for r in rows})
    commits = sorted({r["commit"] for r in rows})
    lines = [f"One {' / '.join(gpus)}, commit {', '.join(commits)}, fp32, rattled Si diamond, NVE, energy + forces "
             "+ virial every step (`bench/accelerators/results.csv`; regenerated by `report.py --results`):", "",
             "| model | accelerator | atoms | DISTSPEC s/step | peak GiB | model's own fastest call | s/call | "
             "own / DISTSPEC | forces vs reference, 2 ranks vs 1 (eV/Å) |",
             "|---|---|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['accelerator']} | {int(r['atoms']):,} | {r['seconds_per_step']} | "
                     f"{r['peak_gib']} | {r['own_call']} | {r['own_seconds']} | {r['own_over_distspec']} | "
                     f"{', '.join(filter(None, (r['forces_vs_reference'], r['ranks2_vs_ranks1'])))} |")
    return lines


def plot(rows: list[dict], png: str) -> None:
    data = os.path.splitext(png)[0] + ".dat"
    series = []
    with open(data, "w") as f:
        for key in sorted({(r["model"], r["accelerator"]) for r in rows}):
            points = [r for r in rows if (r["model"], r["accelerator"]) == key]
            for column, label in (("seconds_per_step", "DISTSPEC"), ("own_seconds", "own call")):
                values = [(int(r["atoms"]), float(r[column])) for r in points if _number(r[column])]
                if not values:
                    continue
                f.write("".join(f"{a} {v}\n" for a, v in values) + "\n\n")
                series.append(f"{key[0]} ({key[1]}), {label}")
    plots = ", \\\n     ".join(f"'{data}' index {i} using 1:2 with linespoints lw 2 pt 7{' dt 2' if 'own' in t else ''} "
                               f"title '{t}'" for i, t in enumerate(series))
    script = f"""
set terminal pngcairo size 720,440 font ',10' noenhanced
set output '{png}'
set title 'bench/accelerators on {' / '.join(sorted({r['gpu'] for r in rows}))}: seconds per step'
set grid
set xlabel 'atoms'
set ylabel 'seconds per step (energy + forces + virial)'
set logscale xy
set key top left
plot {plots}
"""
    if series:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)


def _number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def update_readme(args) -> int:
    rows = list(csv.DictReader(open(args.csv)))
    text = open(args.readme).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"results.py: {args.readme} has no `{BEGIN}` ... `{END}` block; add the two lines where the "
                 "table belongs")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = table(rows)
    if args.plot:
        plot(rows, args.plot)
        block += ["", f"![bench/accelerators]({os.path.relpath(args.plot, os.path.dirname(args.readme) or '.')})"]
    open(args.readme, "w").write(head + BEGIN + "\n" + "\n".join(block) + "\n" + END + tail)
    print(f"results.py: {len(rows)} rows of {args.csv} in {args.readme}" + (f", plot {args.plot}" if args.plot else ""))
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("csv")
    c.add_argument("folders", nargs="+")
    c.add_argument("--commit", default="")
    t = sub.add_parser("table")
    t.add_argument("csv")
    r = sub.add_parser("readme")
    r.add_argument("csv")
    r.add_argument("readme")
    r.add_argument("--plot")
    args = p.parse_args(argv)
    if args.command == "table":
        print("\n".join(table(list(csv.DictReader(open(args.csv))))))
        return 0
    return write_csv(args) if args.command == "csv" else update_readme(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
