"""The table and the plot of bench/pme_cost/run.sh: seconds per step of the Ewald and the PME
model by ion count, the PME mesh, Ewald's k-vector count, and PME's speed-up.
    python3 report.py LOG_DIR PLOT.png"""
import glob
import os
import re
import subprocess
import sys

out, plot = sys.argv[1], sys.argv[2]
rows = {}
for path in glob.glob(os.path.join(out, "log.*.*")):
    _, model, n = os.path.basename(path).split(".")
    text = open(path, errors="replace").read()
    loops = re.findall(r"Loop time of ([0-9.eE+-]+) on \d+ procs for (\d+) steps with (\d+) atoms", text)
    if len(loops) < 2:
        continue
    seconds, steps, atoms = float(loops[-1][0]), int(loops[-1][1]), int(loops[-1][2])
    grid = re.search(r"  grid = (\d+ \d+ \d+)", text)
    kvec = re.search(r"KSpace vectors: actual max1d max3d = (\d+)", text)
    rows.setdefault(atoms, {})[model] = (seconds / steps, grid.group(1) if grid else "", kvec.group(1) if kvec else "")
machine = open(os.path.join(out, "machine.txt")).read().strip() if os.path.exists(os.path.join(out, "machine.txt")) else ""
print(f"Rock salt, accuracy 1e-5, cutoff 10 A; {machine}\n")
print("| ions | Ewald s/step | k-vectors | PME s/step | PME mesh | Ewald / PME |")
print("|---:|---:|---:|---:|---|---:|")
data = []
for atoms in sorted(rows):
    r = rows[atoms]
    e = r.get("ewald")
    p = r.get("pme")
    ratio = f"{e[0] / p[0]:.1f}" if e and p else ""
    print(f"| {atoms} | {f'{e[0]:.3g}' if e else 'not finished'} | {e[2] if e else ''} | "
          f"{f'{p[0]:.3g}' if p else 'not finished'} | {p[1] if p else ''} | {ratio} |")
    data.append((atoms, e[0] if e else None, p[0] if p else None))
with open(os.path.join(out, "plot.dat"), "w") as f:
    for atoms, e, p in data:
        f.write(f"{atoms} {e if e else 'NaN'} {p if p else 'NaN'}\n")
script = f"""set terminal pngcairo size 800,560
set output '{plot}'
set logscale xy
set xlabel 'ions'
set ylabel 'seconds per step'
set key top left
set title 'Ewald vs PME at accuracy 1e-5 (rock salt)'
plot '{out}/plot.dat' using 1:2 with linespoints title 'Ewald (distspec ewald)', \\
     '' using 1:3 with linespoints title 'PME (distspec pme)'
"""
subprocess.run(["gnuplot"], input=script, text=True, check=False)
