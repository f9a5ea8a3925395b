"""The table and the plot of bench/pme_scaling/run.sh: seconds per step of DISTSPEC's PME (the
spec's replicated mesh) and LAMMPS' pppm (a distributed mesh) by rank count, PME's step split
by op (avg over ranks, from `timing yes`), pppm's Pair and Kspace, and each one's parallel
efficiency against its own run on one rank.
    python3 report.py LOG_DIR PLOT.png"""
import glob
import os
import re
import sys

out, plot = sys.argv[1], sys.argv[2]
OPS = {
    "nvalchemiops::spline_spread": "spread",
    "distspec_pme::solve": "solve",
    "distspec_pme::interpolate": "interpolate",
    "distspec_ewald::real_space": "real space",
}


def last_loop(text):
    loops = re.findall(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps with (\d+) atoms", text)
    if len(loops) < 2:
        return None
    seconds, procs, steps, atoms = loops[-1]
    return float(seconds) / int(steps), int(procs), int(steps), int(atoms)


def section(text, name):
    found = re.findall(rf"^{name}\s*\|\s*[0-9.eE+-]+\s*\|\s*([0-9.eE+-]+)", text, re.M)
    return float(found[-1]) if found else 0.0


rows = {}
for path in glob.glob(os.path.join(out, "log.*.*")):
    _, long, ranks = os.path.basename(path).split(".")
    text = open(path, errors="replace").read()
    loop = last_loop(text)
    if not loop:
        continue
    per_step, procs, steps, atoms = loop
    grid = re.findall(r"  grid = (\d+ \d+ \d+)", text)
    r = {"step": per_step, "atoms": atoms, "grid": grid[-1] if grid else ""}
    if long == "pme":
        table = text.rsplit("DISTSPEC op timing", 1)[-1]
        for line in table.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 4 and parts[0] in OPS:
                kernel, adapter = parts[2].split(), parts[3].split()
                r[OPS[parts[0]]] = float(kernel[1])
                if OPS[parts[0]] == "spread":
                    r["all-reduce"] = float(adapter[1])
    else:
        r["pair"] = section(text, "Pair") / steps
        r["kspace"] = section(text, "Kspace") / steps
    rows.setdefault(long, {})[int(ranks)] = r

machine = open(os.path.join(out, "machine.txt")).read().strip() if os.path.exists(os.path.join(out, "machine.txt")) else ""
atoms = next((r["atoms"] for m in rows.values() for r in m.values()), 0)
pme_grid = next((r["grid"] for r in rows.get("pme", {}).values() if r["grid"]), "")
pppm_grid = next((r["grid"] for r in rows.get("pppm", {}).values() if r["grid"]), "")
print(f"Rock salt, {atoms} ions, accuracy 1e-5, cutoff 10 A; PME mesh {pme_grid}, pppm grid {pppm_grid}; {machine}\n")
print("| ranks | PME s/step | spread | mesh all-reduce | solve (FFTs) | interpolate | real space | PME efficiency "
      "| pppm s/step | Pair | Kspace | pppm efficiency | PME / pppm |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
all_ranks = sorted(set(rows.get("pme", {})) | set(rows.get("pppm", {})))
p1 = rows.get("pme", {}).get(1, {}).get("step")
q1 = rows.get("pppm", {}).get(1, {}).get("step")


def f(v, fmt="{:.4f}"):
    return fmt.format(v) if v is not None else "not run"


for n in all_ranks:
    p = rows.get("pme", {}).get(n, {})
    q = rows.get("pppm", {}).get(n, {})
    pe = p1 / (n * p["step"]) if p1 and p.get("step") else None
    qe = q1 / (n * q["step"]) if q1 and q.get("step") else None
    ratio = p["step"] / q["step"] if p.get("step") and q.get("step") else None
    print(f"| {n} | {f(p.get('step'))} | {f(p.get('spread'))} | {f(p.get('all-reduce'))} | {f(p.get('solve'))} "
          f"| {f(p.get('interpolate'))} | {f(p.get('real space'))} | {f(pe, '{:.0%}')} | {f(q.get('step'))} "
          f"| {f(q.get('pair'))} | {f(q.get('kspace'))} | {f(qe, '{:.0%}')} | {f(ratio, '{:.2f}')} |")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
for long, label in (("pme", "DISTSPEC PME (replicated mesh)"), ("pppm", "LAMMPS pppm (distributed mesh)")):
    m = rows.get(long, {})
    xs = sorted(m)
    a.loglog(xs, [m[x]["step"] for x in xs], "o-", label=label)
    if xs and 1 in m:
        a.loglog(xs, [m[1]["step"] / x for x in xs], ":", color="gray")
a.set_xlabel("MPI ranks")
a.set_ylabel("seconds per step")
a.set_title(f"{atoms} ions, accuracy 1e-5 (dotted: ideal)")
a.legend()
m = rows.get("pme", {})
xs = sorted(m)
bottom = [0.0] * len(xs)
for key in ("real space", "spread", "all-reduce", "solve", "interpolate"):
    vals = [m[x].get(key, 0.0) for x in xs]
    b.bar([str(x) for x in xs], vals, bottom=bottom, label=key)
    bottom = [u + v for u, v in zip(bottom, vals)]
b.set_xlabel("MPI ranks")
b.set_ylabel("seconds per step (avg over ranks)")
b.set_title("DISTSPEC PME: where the step goes")
b.legend()
fig.tight_layout()
fig.savefig(plot, dpi=110)
