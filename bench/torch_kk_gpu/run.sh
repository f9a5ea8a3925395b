#!/usr/bin/env bash
# Exported torch potentials on one GPU: distspec/kk (positions, species and edges wrapped from
# Kokkos views, every per-step array on the GPU) against the plain style with `device cuda`
# (LAMMPS' atoms, neighbour list and integrator on the host), `timing yes` on both, for the toy
# MPNN (2 layers, fp64) at 10 976, 108 000 and 1 048 576 atoms and SevenNet-0 (fp32, e3nn tensor
# products) at 10 648 and 39 304 atoms (the largest that fits an H200: 3.2 GB per 1 000 atoms).
# Then report.py: ms per step, the graph call's share and where the rest goes (table.md, plot).
#   bench/torch_kk_gpu/run.sh LMP PLUGIN MODELS
#     LMP, PLUGIN   a KOKKOS-for-CUDA LAMMPS and a plugin with CUDA and torch
#                   (DISTSPEC_GPU_TORCH=ON scripts/gpu_build_kokkos.sh prints both)
#     MODELS        toy_mpnn_L2_cuda.json and 7net0_cuda.json (scripts/gpu_torch_fixtures.sh)
# Environment: BENCH_TOY_CELLS ("14 30 64"), BENCH_TOY_STEPS (20), BENCH_7NET_CELLS ("11 17"),
#              BENCH_7NET_STEPS (5), OUT_DIR (bench/torch_kk_gpu/out); an empty list skips a model.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lmp=$(realpath "${1:?usage: run.sh LMP PLUGIN MODELS}")
plugin=$(realpath "${2:?usage: run.sh LMP PLUGIN MODELS}")
models=$(realpath "${3:?usage: run.sh LMP PLUGIN MODELS}")
out=$(realpath -m "${OUT_DIR:-$here/out}")
mkdir -p "$out"
plugin_dir=$(dirname "$plugin")
export LD_LIBRARY_PATH="$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS=1
kk=(-k on g 1 -sf kk -pk kokkos newton on neigh half)
# The models by a path inside OUT_DIR, the plugin by name: the logs name no path of this machine.
ln -sfn "$models" "$out/models"
start=$(date +%s)
say() { echo "bench [$(( $(date +%s) - start )) s]: $*" >&2; }

# measure MODEL STYLE N ARGS...: one LAMMPS run into log.MODEL.STYLE.N
measure() {
  local model=$1 style=$2 n=$3; shift 3
  say "$model $style n=$n"
  (cd "$out" && timeout "${BENCH_TIMEOUT:-240}" "$lmp" "$@" -in "$here/in.torch_kk" -log "log.$model.$style.$n" \
     -screen none -var plugin "$(basename "$plugin")" -var n "$n") > /dev/null 2>&1 ||
    { say "log.$model.$style.$n: stopped"; grep -m1 ERROR "$out/log.$model.$style.$n" >&2; }
}
both() {  # MODEL N ARGS...
  local model=$1 n=$2; shift 2
  measure "$model" device_cuda "$n" "$@" -var pair "distspec device cuda timing yes"
  measure "$model" kk "$n" "${kk[@]}" "$@" -var pair "distspec timing yes"
}
for n in ${BENCH_TOY_CELLS-14 30 64}; do
  both toy "$n" -var model models/toy_mpnn_L2_cuda.json -var element Cu -var lattice "fcc 3.615" -var mass 63.546 \
    -var steps "${BENCH_TOY_STEPS:-20}"
done
for n in ${BENCH_7NET_CELLS-11 17}; do
  both 7net0 "$n" -var model models/7net0_cuda.json -var element Si -var lattice "diamond 5.431" -var mass 28.0855 \
    -var steps "${BENCH_7NET_STEPS:-5}"
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/machine.txt" 2>/dev/null || true
python3 "$here/report.py" "$out"
