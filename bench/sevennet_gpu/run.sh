#!/usr/bin/env bash
# SevenNet-0 on one GPU: seconds per step of the exported SevenNet-0 (per-layer halo refresh,
# AOTInductor for CUDA, fp32) beside SevenNet's own serial module (`sevenn`'s deploy, TorchScript)
# run through the same backend, both `pair_style distspec device cuda`, on silicon crystals of
# about 10 000, 100 000 and 1 000 000 atoms (a size that does not fit is reported as such); then
# 2 MPI ranks sharing the GPU; and first a check of forces, energy and pressure on 512 atoms
# against SevenNet's serial module on the CPU.
#
#   bench/sevennet_gpu/run.sh
#
# Environment:
#   DISTSPEC_LMP, DISTSPEC_PLUGIN  lmp and libdistspec.so (a CUDA + torch build: scripts/gpu_build.sh)
#   DISTSPEC_PYTHON_SEVENN  a Python with torch and sevenn (default python3)
#   DISTSPEC_SPECS          where nvalchemi does not import there: a folder with the specs nvalchemi
#                           saved elsewhere (sevennet.spec.json, serial.spec.json; bench/sevennet_gpu/specs.py)
#   BENCH_CELLS ("11 14 17 20 23 50": 10 648 to 97 336 atoms, and 1 000 000), BENCH_STEPS (5),
#   BENCH_SHARED_CELLS (17), BENCH_OUT (build/bench/sevennet_gpu).
# Each timed run samples the GPU's memory in use (nvidia-smi, every 100 ms) for the table.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lmp=${DISTSPEC_LMP:-lmp}
plugin=${DISTSPEC_PLUGIN:?set DISTSPEC_PLUGIN to a libdistspec.so built with CUDA and torch}
python=${DISTSPEC_PYTHON_SEVENN:-python3}
cells=${BENCH_CELLS:-11 14 17 20 23 50}
steps=${BENCH_STEPS:-5}
shared=${BENCH_SHARED_CELLS:-17}
out=$(realpath -m "${BENCH_OUT:-$repo/build/bench/sevennet_gpu}")
mkdir -p "$out/model"
plugin_dir=$(cd "$(dirname "$plugin")" && pwd)
export LD_LIBRARY_PATH="$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plugin_name=$(basename "$plugin")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
spec_args() { [ -n "${DISTSPEC_SPECS:-}" ] && echo "--spec $DISTSPEC_SPECS/$1.spec.json"; }
start=$(date +%s)
say() { echo "bench [$(( $(date +%s) - start )) s]: $*" >&2; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/machine.txt" 2>/dev/null ||
  echo "no nvidia-smi" > "$out/machine.txt"
"$python" -c 'import torch; print("torch", torch.__version__)' >> "$out/machine.txt"

# The two model files: the exported graph for CUDA, and SevenNet's serial module.
if [ ! -f "$out/model/7net0_cuda.json" ]; then
  say "exporting SevenNet-0 for cuda (minutes)"
  # shellcheck disable=SC2046
  "$python" "$repo/tools/distspec-export" --module distspec_export.sevennet:checkpoint \
    --module-args '{"name": "7net-0"}' $(spec_args sevennet) --elements Si --cutoff 5.0 --units metal \
    --precision fp32 --device cuda --no-check --out "$out/model" --name 7net0_cuda >&2 || exit 1
fi
if [ ! -f "$out/model/7net0_serial.json" ]; then
  say "deploying SevenNet-0's serial module"
  "$python" -c 'import sys; from sevenn.scripts.deploy import deploy; deploy("7net-0", sys.argv[1])' \
    "$out/model/deployed_serial.pt" >&2 || exit 1
  # shellcheck disable=SC2046
  "$python" "$repo/tools/distspec-export" --deployed "$out/model/deployed_serial.pt" $(spec_args serial) \
    --elements Si --cutoff 5.0 --units metal --out "$out/model" --name 7net0_serial >&2 || exit 1
fi

# LAMMPS in $out: the inputs by path, the plugin by name (logs name no path of this machine).
lammps() {  # ranks log input vars...
  local np=$1 log=$2 input=$3; shift 3
  (cd "$out" && mpirun -np "$np" "$lmp" -in "$input" -log "$log" -screen none -var plugin "$plugin_name" "$@")
}

say "forces on 512 atoms: serial module on the cpu, serial and exported on the gpu, exported on 2 ranks"
rm -f "$out"/forces.* "$out"/log.check.*
lammps 1 log.check.serial_cpu "$here/in.forces" -var model model/7net0_serial.json -var device cpu -var tag serial_cpu
lammps 1 log.check.serial_cuda "$here/in.forces" -var model model/7net0_serial.json -var device cuda -var tag serial_cuda
lammps 1 log.check.export_cuda "$here/in.forces" -var model model/7net0_cuda.json -var device cuda -var tag export_cuda
lammps 2 log.check.export_cuda_2 "$here/in.forces" -var model model/7net0_cuda.json -var device cuda -var tag export_cuda_2

timed() {  # model-name n ranks
  local log=log.$1.$2.$3 sampler status=0
  say "$1, $((8 * $2 * $2 * $2)) atoms, $3 rank(s)"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$out/memory.$1.$2.$3" 2>/dev/null &
  sampler=$!
  lammps "$3" "$log" "$here/../sevennet_cpu/in.bench" -var model "model/7net0_$1.json" -var n "$2" \
    -var steps "$steps" -var device cuda || status=1
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  [ $status = 0 ] || { say "$log: LAMMPS stopped"; grep -m1 ERROR "$out/$log" >&2; }
}
for n in $cells; do
  for model in cuda serial; do timed $model "$n" 1; done
done
timed cuda "$shared" 2
python3 "$here/report.py" "$out" "$cells" "$shared" | tee "$out/table.md"
