"""Reads what the benchmarks need from LAMMPS log files (Python 3 standard library only).

A log is cut into segments at lines "BENCH segment <label> <repeat>" that the benchmark inputs
print before each run; each segment yields its loop time, steps, atoms, the avg column of
LAMMPS' "MPI task timing breakdown", DISTSPEC's timing breakdown (pair_style ... timing yes) and
its halo report line.
"""

import re
import statistics

LOOP = re.compile(r"^Loop time of (\S+) on (\d+) procs for (\d+) steps with (\d+) atoms")
SECTION = re.compile(r"^(Pair|Neigh|Comm|Output|Modify|Other)\s*\|\s*(\S*)\s*\|\s*(\S+)\s*\|")
DISTSPEC_ROW = re.compile(r"^(Kernels|Exchange|Graph|Edges|Checks|Writeback|Total)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(\S+)")
HALO = re.compile(r"^DISTSPEC halo \((\w+)\): owned rows (\d+).*halo rows (\d+) \(min (\d+), max (\d+)\).*"
                  r"exchanges per step: (\d+) forward \+ (\d+) reverse.*feature bytes per step (\d+) \(max (\d+) per rank\)")
MEMORY = re.compile(r"^Per MPI rank memory allocation \(min/avg/max\) = (\S+) \| (\S+) \| (\S+) Mbytes")


class Segment:
    def __init__(self, label, repeat):
        self.label, self.repeat = label, repeat
        self.loop = self.steps = self.atoms = self.procs = None
        self.sections = {}   # LAMMPS section -> avg seconds
        self.distspec = {}   # DISTSPEC section -> avg seconds
        self.halo = None     # dict from the halo report line
        self.memory_mb = None  # LAMMPS' max per-rank memory estimate

    @property
    def atom_steps_per_s(self):
        return self.atoms * self.steps / self.loop

    def per_step_ms(self, seconds):
        return 1e3 * seconds / self.steps


def segments(path):
    found, current = [], None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("BENCH segment "):
                _, _, label, repeat = line.split()[:4]
                current = Segment(label, int(repeat))
                found.append(current)
                continue
            if current is None:
                continue
            if m := LOOP.match(line):
                current.loop, current.procs = float(m[1]), int(m[2])
                current.steps, current.atoms = int(m[3]), int(m[4])
            elif m := SECTION.match(line):
                current.sections[m[1]] = float(m[3])
            elif m := DISTSPEC_ROW.match(line):
                current.distspec[m[1]] = float(m[3])
            elif m := HALO.match(line):
                current.halo = {"strategy": m[1], "owned": int(m[2]), "halo": int(m[3]), "halo_max": int(m[5]),
                                "forward": int(m[6]), "reverse": int(m[7]), "bytes": int(m[8]),
                                "bytes_max": int(m[9])}
            elif m := MEMORY.match(line):
                current.memory_mb = float(m[3])
    return [s for s in found if s.loop is not None and s.loop > 0]


def median(values):
    return statistics.median(values) if values else float("nan")
