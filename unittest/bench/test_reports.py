#!/usr/bin/env python3
"""bench/accelerators' readers of LAMMPS logs, on logs written here (ctest bench.reports):

- report.py's table of seconds per step has a row per size for an accelerator whose name holds a
  '-' (mace-kernels): the loop time of the timed run over its steps, the peak of the memory
  samples, and "out of GPU memory" for a size that stopped with the plugin's message;
- drift.py's slope of TotEng against time, from a log whose last run is 1 000 steps of 1 fs with
  TotEng = E0 + a t, equals a per atom (meV/atom/ps), and the warm-up run before it is not read;
  a log without a run is reported, not skipped;
- kernel_classes.py's shares of Nsight Systems' kernel summary: each class's time over the total
  (an OpenEquivariance backward, a cuBLAS product, a Triton kernel), and a kernel no rule knows
  listed by name with its share, not hidden.

  test_reports.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "bench" / "accelerators" / "report.py"
DRIFT = REPO / "bench" / "accelerators" / "drift.py"
CLASSES = REPO / "bench" / "accelerators" / "kernel_classes.py"
HEADER = "   Step          Temp          E_pair         E_mol          TotEng         Press     "


def loop(seconds: float, steps: int, atoms: int) -> str:
    return f"Loop time of {seconds} on 1 procs for {steps} steps with {atoms} atoms\n"


def run_log(rows: list[tuple[int, float]], atoms: int, seconds: float) -> str:
    body = "".join(f"{step:8d}   300.0   -1.0   0.0   {energy:.9f}   0.0\n" for step, energy in rows)
    return HEADER + "\n" + body + loop(seconds, rows[-1][0] - rows[0][0], atoms)


def main() -> int:
    failures = 0

    def check(ok: bool, what: str, detail: str) -> None:
        nonlocal failures
        print(("PASS " if ok else "FAIL ") + what + ": " + detail)
        failures += 0 if ok else 1

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "machine.txt").write_text("NVIDIA H100 80GB HBM3, 81559 MiB\ntorch 2.11.0\n")
        (folder / "log.mace-kernels.11").write_text(
            "timestep 0.001\n" + loop(0.44, 1, 10648) + loop(0.5, 5, 10648))
        (folder / "memory.mace-kernels.11").write_text("1024\n4096\n2048\n")
        (folder / "log.mace-kernels.37").write_text(
            loop(2.0, 1, 405224) + "ERROR on proc 0: pair_style distspec: graph ran out of GPU memory on 502520 rows\n")
        out = subprocess.run([sys.executable, str(REPORT), str(folder), "mace-kernels", "mace"],
                             capture_output=True, text=True)
        check(out.returncode == 0, "report.py runs", out.stderr.strip()[-200:] or "exit 0")
        check("| 10648 | 0.1000 | 4.0 |" in out.stdout, "report.py: mace-kernels at 10 648 atoms",
              "0.5 s over 5 steps, peak 4096 MiB" + ("" if "| 10648 |" in out.stdout else f"; table: {out.stdout}"))
        check("| 405224 | out of GPU memory |" in out.stdout, "report.py: a size that ran out of memory",
              "named as such")

        atoms, slope = 512, 0.25  # eV/ps over the whole system
        warm = run_log([(0, -100.0), (1, -90.0)], atoms, 0.3)  # far off the line: must not be read
        steps = [(s, -100.0 + slope * s * 0.001) for s in range(1, 1002)]
        (folder / "log.nve").write_text("timestep        0.001\n" + warm + run_log(steps, atoms, 9.8))
        (folder / "log.empty").write_text("ERROR: no run\n")
        out = subprocess.run([sys.executable, str(DRIFT), str(folder / "log.nve"), str(folder / "log.empty")],
                             capture_output=True, text=True)
        rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
                for line in out.stdout.splitlines() if line.startswith("| ") and "log" in line.split("|")[1]}
        nve = rows.get(str(folder / "log.nve"), [])
        expected = 1e3 * slope / atoms
        try:
            got = float(nve[2])
        except (IndexError, ValueError):
            got = float("nan")  # no slope: the check below fails and prints the row

        check(abs(got - expected) <= 1e-3 * expected, "drift.py: slope of TotEng",
              f"{got} meV/atom/ps against {expected:.4g}; row {nve}")
        check(nve[:2] == ["512", "1000"], "drift.py: atoms and steps of the last run", f"{nve[:2]}")
        check("no NVE run" in " ".join(rows.get(str(folder / "log.empty"), [])), "drift.py: a log without a run",
              "reported")
        kernels = folder / "kernels.csv"
        kernels.write_text(
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            '50.0,5000000,10,1,1,1,1,0,"backward"\n'
            '30.0,3000000,20,1,1,1,1,0,"sm90_xmma_gemm_f32f32_f32f32_f32_tn_n"\n'
            '15.0,1500000,40,1,1,1,1,0,"triton_poi_fused_mul_0"\n'
            '5.0,500000,2,1,1,1,1,0,"void mystery_kernel<float>(int)"\n')
        out = subprocess.run([sys.executable, str(CLASSES), str(kernels)], capture_output=True, text=True)
        shares = {line.split("|")[1].strip(): line.split("|")[2].strip()
                  for line in out.stdout.splitlines() if line.startswith("| ") and "%" in line}
        expected = {"OpenEquivariance convolution backward": "50.0 %", "cuBLAS/CUTLASS matrix products": "30.0 %",
                    "TorchInductor fused (Triton)": "15.0 %", "unmatched": "5.0 %"}
        check(out.returncode == 0 and all(shares.get(k) == v for k, v in expected.items()),
              "kernel_classes.py: shares by class", f"{shares}")
        check("5.0 % (2): `void mystery_kernel<float>(int)`" in out.stdout,
              "kernel_classes.py: an unmatched kernel is named", "with its share and launches")
    print(f"{'FAILED' if failures else 'PASSED'}: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
