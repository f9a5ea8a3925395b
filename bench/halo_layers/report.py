#!/usr/bin/env python3
"""Table and plot of bench/halo_layers/run.sh from its LAMMPS logs and /usr/bin/time outputs.

    report.py LOG_FOLDER PLOT.png

Per (L, ranks, strategy): time per step (LAMMPS loop time / steps; median over repeats), halo
rows (all ranks, and the largest rank), feature bytes per step (all ranks), peak memory per
rank (largest maximum resident set size of the ranks, and LAMMPS' own per-rank estimate), and
DISTSPEC's split of the pair time into kernels and exchanges. Then, per (L, ranks), the ratio
expanded / per_layer, and for each rank count the smallest L > 1 from which per_layer stays faster.
"""

import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lammps_log  # noqa: E402
import report_util  # noqa: E402

STRATEGIES = ("per_layer", "expanded")


def collect(folder):
    runs = {}
    for path in glob.glob(os.path.join(folder, "log.*")):
        L, ranks, strategy, _rep = os.path.basename(path).split(".")[1:5]
        segs = lammps_log.segments(path)
        if not segs:
            continue
        s = segs[0]
        rss_path = os.path.join(folder, "rss." + os.path.basename(path)[4:])
        rss = [int(m) for m in re.findall(r"BENCH maxrss_kb (\d+)", open(rss_path).read())] if os.path.exists(
            rss_path) else []
        runs.setdefault((int(L), int(ranks), strategy), []).append((s, max(rss) if rss else float("nan")))
    rows = []
    med = lammps_log.median
    for (L, ranks, strategy), group in sorted(runs.items()):
        s0 = group[0][0]
        halo = s0.halo or {}
        rows.append({
            "L": L, "ranks": ranks, "strategy": strategy, "atoms": s0.atoms, "repeats": len(group),
            "ms": med([s.per_step_ms(s.loop) for s, _ in group]),
            "kernels": med([s.per_step_ms(s.distspec.get("Kernels", float("nan"))) for s, _ in group]),
            "exchange": med([s.per_step_ms(s.distspec.get("Exchange", float("nan"))) for s, _ in group]),
            "halo": halo.get("halo", 0), "halo_max": halo.get("halo_max", 0), "owned": halo.get("owned", 0),
            "exchanges": "%d+%d" % (halo.get("forward", 0), halo.get("reverse", 0)),
            "bytes": halo.get("bytes", 0),
            "rss_mib": max(r for _, r in group) / 1024.0,
            "lammps_mib": s0.memory_mb or float("nan"),
        })
    return rows


def print_tables(rows, machine):
    atoms = rows[0]["atoms"]
    print("# message-passing model, halo per_layer vs expanded: fcc Cu, %d atoms (%s)" % (atoms, machine))
    print("| L | ranks | halo | ms/step | kernels ms | exchange ms | halo rows (max/rank) | exchanges fwd+rev "
          "| feature MB/step | peak RSS MiB/rank | LAMMPS MiB/rank |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %s | %.0f | %.0f | %.1f | %d (%d) | %s | %.2f | %.0f | %.0f |" % (
            r["L"], r["ranks"], r["strategy"], r["ms"], r["kernels"], r["exchange"], r["halo"], r["halo_max"],
            r["exchanges"], r["bytes"] / 1e6, r["rss_mib"], r["lammps_mib"]))
    print()
    by = {(r["L"], r["ranks"], r["strategy"]): r for r in rows}
    ranks = sorted({r["ranks"] for r in rows})
    layers = sorted({r["L"] for r in rows})
    print("# expanded / per_layer: time per step (memory)")
    print("| L | " + " | ".join("%d rank%s" % (n, "" if n == 1 else "s") for n in ranks) + " |")
    print("|---|" + "---|" * len(ranks))
    for L in layers:
        cells = []
        for n in ranks:
            p, e = by.get((L, n, "per_layer")), by.get((L, n, "expanded"))
            cells.append("%.2f (%.2f)" % (e["ms"] / p["ms"], e["rss_mib"] / p["rss_mib"]) if p and e else "-")
        print("| %d | %s |" % (L, " | ".join(cells)))
    print()
    # At L = 1 the two strategies are the same computation (nothing to expand): the crossover is
    # the smallest L > 1 from which per_layer stays faster.
    for n in ranks:
        deeper = [L for L in layers if L > 1 and (L, n, "per_layer") in by and (L, n, "expanded") in by]
        faster = [L for L in deeper if by[(L, n, "per_layer")]["ms"] < by[(L, n, "expanded")]["ms"]]
        since = next((L for L in deeper if all(M in faster for M in deeper if M >= L)), None)
        print("crossover, %d rank(s): per_layer is faster for every L >= %s (L = 1: the same computation)" % (
            n, since if since is not None else "(none measured)"))


def plot(rows, folder, png):
    data = os.path.join(folder, "layers.dat")
    ranks = sorted({r["ranks"] for r in rows})
    with open(data, "w") as f:
        for n in ranks:
            for strategy in STRATEGIES:
                f.write("# %d rank(s) %s\n" % (n, strategy))
                for r in rows:
                    if r["ranks"] == n and r["strategy"] == strategy:
                        f.write("%d %.3f %.2f\n" % (r["L"], r["ms"], r["rss_mib"]))
                f.write("\n\n")
    curves = {2: [], 3: []}
    for i, n in enumerate(ranks):
        for j, strategy in enumerate(STRATEGIES):
            for column in curves:
                curves[column].append("'%s' index %d using 1:%d with linespoints lw 2 lc %d dt %d pt %d title '%s, %d rank%s'" % (
                    data, 2 * i + j, column, i + 1, 1 if strategy == "per_layer" else 2, 7 if j == 0 else 5, strategy,
                    n, "" if n == 1 else "s"))
    script = """
set terminal pngcairo size 900,380 font ',10' noenhanced
set output '%s'
set multiplot layout 1,2 title 'message-passing model: halo per_layer (solid) vs expanded (dashed), %d atoms'
set grid
set xlabel 'message-passing layers L'
set xtics 1
set logscale y
set key top left font ',8'
set ylabel 'ms per step'
plot %s
set ylabel 'peak RSS per rank (MiB)'
unset key
plot %s
unset multiplot
""" % (png, rows[0]["atoms"], ", ".join(curves[2]), ", ".join(curves[3]))
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    report_util.main(collect, print_tables, plot, "no completed runs")
