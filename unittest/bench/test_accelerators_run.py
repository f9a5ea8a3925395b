#!/usr/bin/env python3
"""bench/accelerators/run.sh's choice of accelerators and models, without a GPU (ctest
bench.accelerators_run): mpirun and nvidia-smi are stand-ins that record their calls, so only
what run.sh decides is checked, in a few seconds.

- BENCH_MODEL=mace with an accelerator it does not know (cueq) stops before anything runs,
  naming it and the ones it knows (none oeq mace-kernels);
- BENCH_MODEL=sevennet refuses mace-kernels (MACE's own kernels);
- BENCH_MODEL=mace with model files already in BENCH_OUT/model (as exported where mace-torch
  is: the GPU machine has none) runs the default accelerators, mace-kernels then oeq, on those
  files without exporting anything, and tells which files it used.

  test_accelerators_run.py
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "bench" / "accelerators" / "run.sh"
# A stand-in that appends its arguments, one call a line, to $RECORD and succeeds.
RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$RECORD"\nexit 0\n'


def stand_ins(folder: Path) -> Path:
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for name in ("mpirun", "nvidia-smi"):
        path = bin_dir / name
        path.write_text(RECORDER)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def run(folder: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("BENCH_", "DISTSPEC_"))}
    environment.update(PATH=f"{folder / 'bin'}:{os.environ['PATH']}", RECORD=str(folder / "calls"),
                       DISTSPEC_PLUGIN=str(folder / "libdistspec.so"), DISTSPEC_LMP="lmp",
                       DISTSPEC_PYTHON=sys.executable, BENCH_STEPS="1", BENCH_TIMING_CELLS="")
    environment.update(env)
    return subprocess.run(["bash", str(RUN)], env=environment, capture_output=True, text=True, timeout=300)


def main() -> int:
    failures = []

    def check(ok: bool, what: str, detail: str) -> None:
        print(f"{'PASS' if ok else 'FAIL'} {what}: {detail}")
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        stand_ins(folder)
        (folder / "libdistspec.so").write_text("")

        done = run(folder, BENCH_MODEL="mace", BENCH_ACCELERATORS="mace-kernels cueq", BENCH_OUT=str(folder / "o1"))
        check(done.returncode == 2 and "'cueq'" in done.stderr and "none oeq mace-kernels" in done.stderr
              and not (folder / "calls").exists(), "an unknown MACE accelerator stops before anything runs",
              f"exit {done.returncode}; {done.stderr.strip()!r}")

        done = run(folder, BENCH_MODEL="sevennet", BENCH_ACCELERATORS="mace-kernels", BENCH_OUT=str(folder / "o2"))
        check(done.returncode == 2 and "'mace-kernels'" in done.stderr and "none oeq" in done.stderr,
              "SevenNet refuses mace-kernels", f"exit {done.returncode}; {done.stderr.strip()!r}")

        out = folder / "o3"
        (out / "model").mkdir(parents=True)
        for acc in ("mace-kernels", "oeq"):
            (out / "model" / f"mace_{acc}.json").write_text("{}\n")
        done = run(folder, BENCH_MODEL="mace", BENCH_OUT=str(out), BENCH_CELLS_mace_kernels="11",
                   BENCH_CELLS_oeq="11")
        calls = (folder / "calls").read_text().splitlines() if (folder / "calls").exists() else []
        lammps = [c for c in calls if c.startswith("mpirun")]
        models = [next((a for a in c.split() if a.startswith("model/")), "") for c in lammps]
        exports = sorted(p.name for p in out.glob("export.*.log"))
        meta = (out / "meta").read_text() if (out / "meta").exists() else ""
        check(done.returncode == 0 and not exports and "accelerators=mace-kernels oeq" in meta
              and models == ["model/mace_mace-kernels.json"] * 2 + ["model/mace_oeq.json"] * 2
              + ["model/mace_mace-kernels.json", "model/mace_oeq.json"]
              and done.stderr.count("as it is") == 2,
              "MACE's model files placed beforehand: mace-kernels and oeq by default, nothing exported",
              f"exit {done.returncode}; exports {exports}; meta {meta.split()}; LAMMPS runs on {models}; "
              f"{[line for line in done.stderr.splitlines() if 'as it is' in line]}")
        if done.returncode != 0:
            print(done.stderr[-2000:])
    print(f"{3 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
