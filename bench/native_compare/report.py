#!/usr/bin/env python3
"""Table and plot of bench/native_compare/run.sh from its LAMMPS logs.

    report.py LOG_FOLDER PLOT.png

Per (model, atoms, ranks): median atom-steps/s of the native and the distspec segments, the
median and range of the per-repeat ratio distspec/native (each repeat's two segments ran back
to back), and per step the LAMMPS sections Pair / Neigh / Comm of both and DISTSPEC's own
breakdown of its Pair time, with the feature exchanges per step of its halo report.
"""

import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lammps_log  # noqa: E402
import report_util  # noqa: E402

# What each model's "native" segment runs: the LAMMPS style, or for the message-passing model,
# which LAMMPS has no style of, distspec itself on one thread.
NATIVE = {"lj": "lj/cut", "eam": "eam/alloy", "mpnn": "mpnn (1 thread)", "d3": "dispersion/d3"}


def collect(folder):
    rows = []
    for path in glob.glob(os.path.join(folder, "log.*.*.*")):
        # log.MODEL.ATOMS.RANKS[.VARIANT]: VARIANT kkN (-k on t N -sf kk) or tN (distspec threads N)
        _, model, atoms, ranks, *variant = os.path.basename(path).split(".")
        variant = variant[0] if variant else ""
        segs = lammps_log.segments(path)
        native = {s.repeat: s for s in segs if s.label == "native"}
        distspec = {s.repeat: s for s in segs if s.label == "distspec"}
        repeats = sorted(set(native) & set(distspec))
        if not repeats:
            continue
        ratios = [distspec[r].atom_steps_per_s / native[r].atom_steps_per_s for r in repeats]
        med = lammps_log.median

        def per_step(group, section, source="sections"):
            return med([s.per_step_ms(getattr(s, source).get(section, float("nan"))) for s in group])

        n, d = [native[r] for r in repeats], [distspec[r] for r in repeats]
        with open(path) as f:
            halo = re.search(r"feature exchanges per step: (\d+) forward \+ (\d+) reverse", f.read())
        rows.append({
            "model": model, "variant": variant, "atoms": int(native[repeats[0]].atoms), "ranks": int(ranks), "repeats": len(repeats),
            "steps": native[repeats[0]].steps,
            "native": med([s.atom_steps_per_s for s in n]), "distspec": med([s.atom_steps_per_s for s in d]),
            "ratio": med(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "n_pair": per_step(n, "Pair"), "n_neigh": per_step(n, "Neigh"), "n_comm": per_step(n, "Comm"),
            "d_pair": per_step(d, "Pair"), "d_neigh": per_step(d, "Neigh"), "d_comm": per_step(d, "Comm"),
            "exchanges": "%s F + %s R" % halo.groups() if halo else "?",
            **{"ds_" + k: per_step(d, k, "distspec") for k in ("Kernels", "Exchange", "Graph", "Edges", "Checks", "Writeback")},
        })
    rows.sort(key=lambda r: (r["variant"], r["model"] != "lj", r["atoms"], r["ranks"]))
    return rows


def label(r):
    """'lj vs lj/cut', 'lj/kk vs lj/cut/kk (2 threads)', 'lj (2 threads) vs lj/cut'."""
    native = NATIVE.get(r["model"], "?")
    v = r["variant"]
    if v.startswith("kk"):
        return "%s/kk vs %s/kk (%s thread%s)" % (r["model"], native, v[2:], "" if v[2:] == "1" else "s")
    if v.startswith("t"):
        return "%s (%s threads) vs %s" % (r["model"], v[1:], native)
    return "%s vs %s" % (r["model"], native)


def print_tables(rows, machine):
    print("# distspec against native LAMMPS styles (%s)" % machine)
    print("| model | atoms | ranks | steps x repeats | native Matom-steps/s | distspec Matom-steps/s | distspec/native "
          "(median, range) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %d x %d | %.3g | %.3g | %.2f (%.2f-%.2f) |" % (
            label(r), r["atoms"], r["ranks"], r["steps"], r["repeats"],
            r["native"] / 1e6, r["distspec"] / 1e6, r["ratio"], r["ratio_min"], r["ratio_max"]))
    print()
    print("# ms per step (medians): LAMMPS sections of both styles; DISTSPEC's breakdown of its Pair time")
    print("| model | atoms | ranks | native Pair | Neigh | Comm | distspec Pair | Neigh | Comm | kernels | exchange "
          "| graph | edges | checks | write-back | exchanges per step |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %s |" % (
            label(r).split(" vs ")[0], r["atoms"], r["ranks"], r["n_pair"], r["n_neigh"], r["n_comm"], r["d_pair"], r["d_neigh"],
            r["d_comm"], r["ds_Kernels"], r["ds_Exchange"], r["ds_Graph"], r["ds_Edges"], r["ds_Checks"],
            r["ds_Writeback"], r["exchanges"]))


def plot(rows, folder, png):
    data = os.path.join(folder, "ratio.dat")
    with open(data, "w") as f:
        for model in [m for m in ("lj", "eam", "d3") if any(r["model"] == m for r in rows)]:
            for ranks in sorted({r["ranks"] for r in rows}):
                f.write("# %s %d rank(s)\n" % (model, ranks))
                for r in rows:
                    if r["model"] == model and r["ranks"] == ranks and not r["variant"]:
                        f.write("%d %.4f %.4f %.4f\n" % (r["atoms"], r["ratio"], r["ratio_min"], r["ratio_max"]))
                f.write("\n\n")
    ranks = sorted({r["ranks"] for r in rows})
    curves = []
    titles = {"lj": "LJ vs lj/cut", "eam": "EAM vs eam/alloy", "d3": "D3 vs dispersion/d3"}
    models = [m for m in ("lj", "eam", "d3") if any(r["model"] == m for r in rows)]
    for i, model in enumerate(models):
        for j, n in enumerate(ranks):
            index = i * len(ranks) + j
            curves.append("'%s' index %d using 1:2:3:4 with yerrorlines lw 2 pt %d title '%s, %d rank%s'" % (
                data, index, 7 + 2 * i, titles[model], n,
                "" if n == 1 else "s"))
    script = """
set terminal pngcairo size 720,400 font ',10' noenhanced
set output '%s'
set logscale x
set xrange [2500:400000]
set xtics ('4 000' 4000, '32 000' 32000, '256 000' 256000)
set yrange [0:1.4]
set grid
set key bottom right
set xlabel 'atoms'
set ylabel 'distspec / native throughput (atom-steps/s)'
set title 'pair_style distspec against native LAMMPS styles (median, range over repeats)'
plot 0.95 with lines dt 2 lc 'gray' title 'target 0.95', %s
""" % (png, ", ".join(curves))
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    report_util.main(collect, print_tables, plot, "no complete native/distspec segment pairs")
