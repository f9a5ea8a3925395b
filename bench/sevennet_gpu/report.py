"""Tables of bench/sevennet_gpu/run.sh: the 512-atom check against SevenNet's serial module on
the CPU, and seconds per step of the exported SevenNet-0 beside the serial module on the GPU.

  report.py FOLDER "CELLS" SHARED_CELLS
"""

import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lammps_log  # noqa: E402

CASES = [("serial_cuda", "SevenNet's serial module, GPU"), ("export_cuda", "exported, per-layer halo, GPU, 1 rank"),
         ("export_cuda_2", "exported, per-layer halo, GPU, 2 ranks")]


def forces(path):
    rows = {}
    with open(path) as f:
        lines = f.read().splitlines()
    start = lines.index(next(line for line in lines if line.startswith("ITEM: ATOMS"))) + 1
    for line in lines[start:]:
        i, fx, fy, fz = line.split()
        rows[int(i)] = (float(fx), float(fy), float(fz))
    return rows


def check_line(folder, tag):
    m = re.search(r"^CHECK %s (\S+) (\S+)" % tag, open(os.path.join(folder, "log.check." + tag)).read(), re.M)
    return (float(m.group(1)), float(m.group(2))) if m else None


def check_table(folder):
    ref_path = os.path.join(folder, "forces.serial_cpu")
    if not os.path.exists(ref_path):
        return ["no reference run (forces.serial_cpu)"]
    ref, ref_ep = forces(ref_path), check_line(folder, "serial_cpu")
    scale = max(math.sqrt(sum(c * c for c in f)) for f in ref.values())
    out = ["Check on 512 rattled Si atoms against SevenNet's serial module on the CPU "
           "(energy %.6f eV, pressure %.3f bar, largest force %.3f eV/A):" % (ref_ep[0], ref_ep[1], scale), "",
           "| run | max abs force diff (eV/A) | rms force diff (eV/A) | energy diff per atom (eV) | pressure diff (bar) |",
           "|---|---|---|---|---|"]
    for tag, what in CASES:
        path = os.path.join(folder, "forces." + tag)
        ep = check_line(folder, tag) if os.path.exists(os.path.join(folder, "log.check." + tag)) else None
        if not os.path.exists(path) or ep is None:
            out.append("| %s | did not run | | | |" % what)
            continue
        got = forces(path)
        diffs = [max(abs(a - b) for a, b in zip(got[i], ref[i])) for i in ref]
        rms = math.sqrt(sum(sum((a - b) ** 2 for a, b in zip(got[i], ref[i])) for i in ref) / (3 * len(ref)))
        out.append("| %s | %.2e | %.2e | %.2e | %.3f |" % (what, max(diffs), rms, (ep[0] - ref_ep[0]) / len(ref),
                                                         ep[1] - ref_ep[1]))
    return out


def timing(folder, model, n, ranks):
    """(atoms, seconds per step) of the timed run, or (atoms, why it did not run)."""
    atoms = 8 * int(n) ** 3
    path = os.path.join(folder, "log.%s.%s.%s" % (model, n, ranks))
    if not os.path.exists(path):
        return atoms, None
    text = open(path, errors="replace").read()
    loops = [m for m in map(lammps_log.LOOP.match, text.splitlines()) if m]
    if len(loops) < 2:
        error = re.search(r"^ERROR.*?:\s*(.*)$", text, re.M)
        why = error.group(1) if error else "stopped"
        return atoms, "out of GPU memory" if "out of gpu memory" in why.lower() else why[:80]
    m = loops[-1]
    return atoms, float(m.group(1)) / int(m.group(3))


def peak_gib(folder, model, n, ranks):
    """Most GPU memory in use while the run went (nvidia-smi samples, MiB), in GiB."""
    path = os.path.join(folder, "memory.%s.%s.%s" % (model, n, ranks))
    values = [float(v) for v in open(path).read().split() if v.replace(".", "", 1).isdigit()] if os.path.exists(path) else []
    return "%.1f" % (max(values) / 1024) if values else ""


def cell(t):
    return "%.3f" % t if isinstance(t, float) else (t or "not run")


def main():
    folder, cells, shared = sys.argv[1], sys.argv[2].split(), sys.argv[3]
    machine = open(os.path.join(folder, "machine.txt")).read().strip().replace("\n", "; ")
    lines = ["SevenNet-0 (fp32): %s" % machine, ""] + check_table(folder) + [""]
    lines += ["Seconds per step (energy, forces, virial; NVE, silicon), `pair_style distspec device cuda`:", "",
              "| atoms | ranks | exported (per-layer halo) | peak GPU memory (GiB) | SevenNet's serial module | "
              "peak GPU memory (GiB) | exported / serial |",
              "|---|---|---|---|---|---|---|"]
    for n in cells:
        atoms, e = timing(folder, "cuda", n, 1)
        _, s = timing(folder, "serial", n, 1)
        if e is None and s is None:
            continue
        ratio = "%.2f" % (e / s) if isinstance(e, float) and isinstance(s, float) else ""
        lines.append("| %d | 1 | %s | %s | %s | %s | %s |" % (atoms, cell(e), peak_gib(folder, "cuda", n, 1), cell(s),
                                                           peak_gib(folder, "serial", n, 1), ratio))
    atoms, e = timing(folder, "cuda", shared, 2)
    _, e1 = timing(folder, "cuda", shared, 1)
    ratio = "%.2f (vs 1 rank)" % (e / e1) if isinstance(e, float) and isinstance(e1, float) else ""
    gpus = sum(1 for line in machine.split("; ") if line.startswith("NVIDIA"))
    lines.append("| %d | 2, %s | %s | %s | refuses more than 1 rank | | %s |" %
                 (atoms, "one GPU each" if gpus >= 2 else "sharing the GPU", cell(e),
                  peak_gib(folder, "cuda", shared, 2), ratio))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
