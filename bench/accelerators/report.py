"""Tables of bench/accelerators/run.sh: the 512-atom check of each accelerator against the model's
own calculator on the cpu (and 2 ranks against 1) and against the e3nn export, then seconds per
step and peak GPU memory, and DISTSPEC's breakdown of the step where a size ran with timing yes.

  report.py FOLDER "ACCELERATORS" [sevennet|mace]
  report.py --results CSV       replaces bench/README.md's results.csv table with the rows of CSV
                                (results.csv of nequip_run.sh) and draws accelerators.png
"""

import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lammps_log  # noqa: E402

NAMES = {"none": "e3nn (no accelerator)", "oeq": "OpenEquivariance",
         "mace-kernels": "DISTSPEC's MACE kernels (fast forward)"}
MODELS = {"sevennet": ("SevenNet-0", "SevenNet's own calculator on the CPU (e3nn, fp32"),
          "mace": ("MACE of MACE-MP-0 medium's architecture, random weights",
                   "mace-torch's own calculator on the CPU (e3nn, fp64")}


def dump_forces(path):
    lines = open(path).read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ITEM: ATOMS")) + 1
    return {int(r[0]): tuple(map(float, r[-3:])) for r in (line.split() for line in lines[start:])}


def ref_forces(path):
    lines = open(path).read().splitlines()
    energy = float(lines[0].split()[1])
    return energy, {int(r[0]): tuple(map(float, r[1:])) for r in (line.split() for line in lines[1:])}


def check_energy(folder, tag):
    path = os.path.join(folder, "log.check." + tag)
    m = re.search(r"^CHECK %s (\S+) (\S+)" % re.escape(tag), open(path).read(), re.M) if os.path.exists(path) else None
    return float(m.group(1)) if m else None


def check_table(folder, accelerators, model):
    ref_path = os.path.join(folder, "forces.ref")
    if not os.path.exists(ref_path):
        return ["no reference (forces.ref)"]
    ref_e, ref = ref_forces(ref_path)
    largest = max(abs(v) for f in ref.values() for v in f)
    out = ["On 512 rattled Si atoms against %s; energy %.6f eV, largest force component %.3g eV/A):"
           % (MODELS[model][1], ref_e, largest), "",
           "| accelerator | ranks | max abs force diff (eV/A) | rms force diff (eV/A) | energy diff (relative) |",
           "|---|---|---|---|---|"]
    for acc in accelerators:
        for ranks in (1, 2):
            tag = "%s.%d" % (acc, ranks)
            path, e = os.path.join(folder, "forces." + tag), check_energy(folder, tag)
            if not os.path.exists(path) or e is None:
                out.append("| %s | %d | did not run | | |" % (NAMES.get(acc, acc), ranks))
                continue
            got = dump_forces(path)
            d = [max(abs(a - b) for a, b in zip(got[i], ref[i])) for i in ref]
            rms = math.sqrt(sum(sum((a - b) ** 2 for a, b in zip(got[i], ref[i])) for i in ref) / (3 * len(ref)))
            out.append("| %s | %d | %.2e | %.2e | %.1e |" % (NAMES.get(acc, acc), ranks, max(d), rms,
                                                            abs(e - ref_e) / abs(ref_e)))
    return out + [""] + against_e3nn(folder, accelerators)


def against_e3nn(folder, accelerators):
    """Each accelerated export against the e3nn export, same model, ranks and precision (fp32)."""
    if "none" not in accelerators:
        return ["No e3nn export in this run (BENCH_ACCELERATORS): the accelerators against it are not compared."]
    out = ["Each accelerator against the e3nn export (same model, fp32 on the GPU):", "",
           "| accelerator | ranks | max abs force diff (eV/A) | energy diff (relative) |", "|---|---|---|---|"]
    for acc in (a for a in accelerators if a != "none"):
        for ranks in (1, 2):
            paths = [os.path.join(folder, "forces.%s.%d" % (a, ranks)) for a in (acc, "none")]
            energies = [check_energy(folder, "%s.%d" % (a, ranks)) for a in (acc, "none")]
            if not all(map(os.path.exists, paths)) or None in energies:
                out.append("| %s | %d | did not run | |" % (NAMES.get(acc, acc), ranks))
                continue
            got, ref = dump_forces(paths[0]), dump_forces(paths[1])
            d = max(abs(a - b) for i in ref for a, b in zip(got[i], ref[i]))
            out.append("| %s | %d | %.2e | %.1e |" % (NAMES.get(acc, acc), ranks, d,
                                                    abs(energies[0] - energies[1]) / abs(energies[1])))
    return out


def breakdowns(folder, accelerators):
    """DISTSPEC's `timing yes` breakdown of the timed run of each log.ACC.N.timing."""
    out = []
    for acc in accelerators:
        for name in sorted(f for f in os.listdir(folder) if re.match(r"log\.%s\.\d+\.timing$" % acc, f)):
            text = open(os.path.join(folder, name), errors="replace").read()
            start = text.rfind("DISTSPEC timing breakdown")
            if start < 0:
                continue
            n = int(name.split(".")[2])
            block = text[start:].split("\n\n")[0].strip()
            out += ["%s, %d atoms (`timing yes`, last run):" % (NAMES.get(acc, acc), 8 * n ** 3), "",
                    "```", block, "```", ""]
    return out


def timing(folder, acc, n):
    path = os.path.join(folder, "log.%s.%s" % (acc, n))
    if not os.path.exists(path):
        return None
    text = open(path, errors="replace").read()
    loops = [m for m in map(lammps_log.LOOP.match, text.splitlines()) if m]
    if len(loops) < 2:
        error = re.search(r"^ERROR.*?:\s*(.*)$", text, re.M)
        why = error.group(1) if error else "stopped"
        return "out of GPU memory" if "out of gpu memory" in why.lower() else why[:80]
    return float(loops[-1].group(1)) / int(loops[-1].group(3))


def peak_gib(folder, acc, n):
    path = os.path.join(folder, "memory.%s.%s" % (acc, n))
    values = [float(v) for v in open(path).read().split() if v.replace(".", "", 1).isdigit()] if os.path.exists(path) else []
    return max(values) / 1024 if values else None


def main():
    if sys.argv[1:2] == ["--results"] and len(sys.argv) == 3:
        import results  # noqa: PLC0415 (it imports this module)

        here = os.path.dirname(os.path.abspath(__file__))
        return results.main(["readme", sys.argv[2], os.path.join(here, "..", "README.md"),
                             "--plot", os.path.join(here, "accelerators.png")])
    folder, accelerators = sys.argv[1], sys.argv[2].split()
    model = sys.argv[3] if len(sys.argv) > 3 else "sevennet"
    machine = open(os.path.join(folder, "machine.txt")).read().strip().replace("\n", "; ")
    print("%s (fp32) through `pair_style distspec device cuda`, one GPU: %s" % (MODELS[model][0], machine))
    print()
    print("\n".join(check_table(folder, accelerators, model)))
    print()
    cells = sorted({int(m.group(2)) for f in os.listdir(folder) for m in [re.match(r"log\.([\w-]+)\.(\d+)$", f)] if m})
    print("Seconds per step (energy, forces, virial; NVE), peak GPU memory (GiB, nvidia-smi):")
    print()
    print("| atoms | " + " | ".join("%s s/step | GiB" % NAMES.get(a, a) for a in accelerators) + " |")
    print("|---|" + "---|---|" * len(accelerators))
    for n in cells:
        row = ["%d" % (8 * n ** 3)]
        for acc in accelerators:
            t, peak = timing(folder, acc, n), peak_gib(folder, acc, n)
            row += ["" if t is None else ("%.4f" % t if isinstance(t, float) else t),
                    "" if peak is None or t is None else "%.1f" % peak]
        print("| " + " | ".join(row) + " |")
    lines = breakdowns(folder, accelerators)
    if lines:
        print()
        print("\n".join(lines).rstrip())


if __name__ == "__main__":
    sys.exit(main())
