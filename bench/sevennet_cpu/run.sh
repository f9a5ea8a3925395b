#!/usr/bin/env bash
# SevenNet-0 on CPU: seconds per step of `pair_style distspec` (the exported SevenNet-0, 1 and 2
# MPI ranks, one thread each) beside SevenNet's own ASE calculator (SevenNetCalculator, 1 and 2
# torch threads) on the same silicon crystals, in one run of this script.
#
#   bench/sevennet_cpu/run.sh
#
# Environment: DISTSPEC_BUILD, DISTSPEC_LMP (bench/common.sh); BENCH_CELLS ("3 4": 216 and 512
# atoms), BENCH_STEPS (3), BENCH_OUT (logs and the exported model; build/bench/sevennet_cpu),
# BENCH_PLOT (bench/sevennet_cpu/sevennet_cpu.png). Needs DISTSPEC_PYTHON_SEVENN (the bootstrap's
# environment with sevenn); the model is exported once into BENCH_OUT (about 5 minutes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"

cells=${BENCH_CELLS:-3 4}
steps=${BENCH_STEPS:-3}
out=${BENCH_OUT:-$repo/build/bench/sevennet_cpu}
plot=${BENCH_PLOT:-$here/sevennet_cpu.png}
python=${DISTSPEC_PYTHON_SEVENN:?needs the bootstrap\'s sevenn environment (scripts/bootstrap.sh)}
mkdir -p "$out"
rm -f "$out"/log.* "$out"/ase.*
machine_line > "$out/machine.txt"

if [ ! -f "$out/model/7net0.json" ]; then
  echo "bench: exporting SevenNet-0 into $out/model (minutes)" >&2
  "$python" "$repo/tools/distspec-export" --module distspec_export.sevennet:checkpoint \
    --module-args '{"name": "7net-0"}' --elements Si --cutoff 5.0 --units metal --precision fp32 \
    --out "$out/model" --name 7net0 >&2
fi

for n in $cells; do
  for threads in 1 2; do
    echo "bench: SevenNetCalculator, $((8 * n * n * n)) atoms, $threads thread(s)" >&2
    OMP_NUM_THREADS=$threads "$python" "$here/ase_calculator.py" "$n" "$steps" "$threads" > "$out/ase.$n.$threads"
  done
  for np in 1 2; do
    echo "bench: pair_style distspec, $((8 * n * n * n)) atoms, $np rank(s)" >&2
    (cd "$out" && mpirun --oversubscribe -np "$np" "$DISTSPEC_LMP" -in "$here/in.bench" -log "log.$n.$np" \
      -screen none -var plugin "$PLUGIN_NAME" -var model model/7net0.json -var n "$n" -var steps "$steps")
  done
done
python3 "$here/report.py" "$out" "$plot" "$cells"
