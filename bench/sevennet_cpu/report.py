"""Table and plot of bench/sevennet_cpu/run.sh: seconds per step of pair_style distspec with
SevenNet-0 (1 and 2 ranks) beside SevenNet's ASE calculator (1 and 2 threads).

  report.py FOLDER PNG "CELLS"
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lammps_log  # noqa: E402


def seconds_per_step(log):
    """Loop time per step of the timed (last) run of a log."""
    loops = [lammps_log.LOOP.match(line) for line in open(log, errors="replace")]
    loops = [m for m in loops if m]
    if not loops:
        sys.exit("report.py: no finished run in %s" % log)
    m = loops[-1]
    return float(m.group(1)) / int(m.group(3)), int(m.group(4))


def ase_seconds(path):
    m = re.search(r"BENCH ase (\S+)", open(path).read())
    if not m:
        sys.exit("report.py: no timing in %s" % path)
    return float(m.group(1))


def main():
    folder, png, cells = sys.argv[1], sys.argv[2], sys.argv[3].split()
    machine = open(os.path.join(folder, "machine.txt")).read().strip()
    rows = []
    for n in cells:
        d1, atoms = seconds_per_step(os.path.join(folder, "log.%s.1" % n))
        d2, _ = seconds_per_step(os.path.join(folder, "log.%s.2" % n))
        a1 = ase_seconds(os.path.join(folder, "ase.%s.1" % n))
        a2 = ase_seconds(os.path.join(folder, "ase.%s.2" % n))
        rows.append((atoms, a1, a2, d1, d2))
    print("SevenNet-0 on CPU, silicon (diamond, rattled): seconds per energy+forces evaluation")
    print("machine: %s" % machine)
    print()
    print("| atoms | SevenNetCalculator, 1 thread | 2 threads | distspec, 1 rank | 2 ranks | distspec 1 rank / calculator 1 thread | distspec 2 ranks / calculator 2 threads |")
    print("|---|---|---|---|---|---|---|")
    for atoms, a1, a2, d1, d2 in rows:
        print("| %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |" % (atoms, a1, a2, d1, d2, d1 / a1, d2 / a2))
    data = os.path.join(folder, "sevennet_cpu.dat")
    with open(data, "w") as f:
        for r in rows:
            f.write("%d %.6f %.6f %.6f %.6f\n" % r)
    script = """
set terminal pngcairo size 640,400 font ',10' noenhanced
set output '%s'
set title 'SevenNet-0 on CPU: distspec (LAMMPS) vs SevenNetCalculator (ASE)'
set grid
set xlabel 'atoms'
set ylabel 'seconds per step (energy + forces)'
set logscale xy
set key top left
plot '%s' using 1:2 with linespoints lw 2 pt 7 title 'SevenNetCalculator, 1 thread', \\
     '%s' using 1:3 with linespoints lw 2 pt 5 title 'SevenNetCalculator, 2 threads', \\
     '%s' using 1:4 with linespoints lw 2 pt 7 dt 2 title 'distspec, 1 rank', \\
     '%s' using 1:5 with linespoints lw 2 pt 5 dt 2 title 'distspec, 2 ranks'
""" % (png, data, data, data, data)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print("\nplot: %s" % png)


if __name__ == "__main__":
    main()
