#!/usr/bin/env bash
# The README's GPU-cluster recipe ("On a GPU cluster: your LAMMPS, your torch"), run as written on
# a GPU machine, against a LAMMPS and a torch made the way a cluster user makes them, not the way
# scripts/gpu_build.sh does: LAMMPS configured by hand (RelWithDebInfo, OpenMP on, MANYBODY and
# PLUGIN only), the plugin found its LibTorch through Torch_DIR of the machine's own pip torch.
#   scripts/gpu_cluster_recipe.sh build BUNDLE WORK   LAMMPS and the plugin (BUNDLE: pack_gpu_source.sh's,
#                                                       for LAMMPS' source and, standing in for
#                                                       `module load openmpi`, its OpenMPI)
#   scripts/gpu_cluster_recipe.sh check BUNDLE WORK   the native models on the GPU against the CPU
#                                                       (gpu_check.sh), then a torch model exported for
#                                                       the GPU against its CPU export (in.gpu_check_torch)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: gpu_cluster_recipe.sh build|check BUNDLE WORK}
bundle=$(realpath "${2:?BUNDLE}")
work=$(realpath -m "${3:?WORK}")
# shellcheck source=/dev/null
source "$bundle/env.sh"
jobs=$(nproc)
LAMMPS=$work/lammps
python=${PYTHON:-python3}

if [ "$mode" = build ]; then
  start=$(date +%s)
  mkdir -p "$LAMMPS"
  [ -f "$LAMMPS/cmake/CMakeLists.txt" ] || tar xJf "$bundle/lammps-source.tar.xz" -C "$LAMMPS"
  # --- the recipe: LAMMPS ---
  cmake -S "$LAMMPS/cmake" -B "$LAMMPS/build" -D CMAKE_BUILD_TYPE=RelWithDebInfo -D BUILD_MPI=yes -D BUILD_OMP=yes \
    -D BUILD_SHARED_LIBS=yes -D PKG_PLUGIN=yes -D PKG_MANYBODY=yes "${DISTSPEC_MPI_CMAKE_ARGS[@]}" \
    > "$work/lammps-configure.log" || { tail -20 "$work/lammps-configure.log"; exit 1; }
  cmake --build "$LAMMPS/build" -j "$jobs" > "$work/lammps-build.log" || { grep -m5 -A5 error "$work/lammps-build.log"; exit 1; }
  echo "recipe: LAMMPS in $(( $(date +%s) - start )) s"
  # --- the recipe: the plugin, CUDA kernels and the torch kind ---
  cmake -S "$root" -B "$work/plugin" -D CMAKE_BUILD_TYPE=Release \
    -D LAMMPS_SOURCE_DIR="$LAMMPS" -D LAMMPS_BUILD_DIR="$LAMMPS/build" \
    -D DISTSPEC_ENABLE_CUDA=ON -D CMAKE_CUDA_ARCHITECTURES=90 -D DISTSPEC_BUILD_TESTS=OFF \
    -D Torch_DIR="$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')/Torch" \
    -D nlohmann_json_DIR="$bundle/json/share/cmake/nlohmann_json" "${DISTSPEC_MPI_CMAKE_ARGS[@]}" \
    > "$work/plugin-configure.log" || { tail -30 "$work/plugin-configure.log"; exit 1; }
  cmake --build "$work/plugin" -j "$jobs" > "$work/plugin-build.log" || { grep -m10 -B2 -A10 error "$work/plugin-build.log"; exit 1; }
  cmake --install "$work/plugin" --prefix "$work/prefix" > /dev/null
  echo "recipe: plugin in $(( $(date +%s) - start )) s (torch $("$python" -c 'import torch; print(torch.__version__)'))"
  exit 0
fi

# --- check ---
lmp=$LAMMPS/build/lmp
plugin=$work/prefix/lib/libdistspec.so
[ "${SKIP_NATIVE:-0}" = 1 ] || LMP=$lmp DISTSPEC_PLUGIN=$plugin "$root/scripts/gpu_check.sh" "$work/gpu_check.log" | tail -5
# A torch model exported on this machine with its own torch, for the GPU (--device cuda) and for
# the CPU (TorchScript), run under device cuda and device cpu: the same energy and forces. The
# exporter runs without nvalchemi here (its ops defined from their schemas; the spec as a file).
models=$work/models
for target in "--device cuda --no-check --format aoti --name toy_cuda" "--format torchscript --name toy_cpu"; do
  # shellcheck disable=SC2086
  "$python" "$root/tools/distspec-export" --module "$root/unittest/torch/toy_mpnn.py:build" --module-args '{"layers": 2}' \
    --spec "$root/potentials/specs/mpnn_halo.json" --elements Cu Ni --cutoff 4.5 --units metal --out "$models" \
    --quick-compile $target > "$work/export.log" 2>&1 || { tail -5 "$work/export.log"; exit 1; }
  grep -m1 '^wrote' "$work/export.log"
done
cd "$root/examples/gpu"
"$lmp" -in in.gpu_check_torch -var plugin "$plugin" -var cpu_model "$models/toy_cpu.json" \
  -var cuda_model "$models/toy_cuda.json" -log "$work/gpu_check_torch.log" -screen none
grep -h "^CHECK" "$work/gpu_check_torch.log"
awk '$1 == "CHECK" { for (i = 3; i <= NF; ++i) v[$2, i] = $i; n = NF }
  END { worst = 0
        for (i = 3; i <= n; ++i) { a = v["cpu", i]; b = v["cuda", i]; s = (a < 0 ? -a : a); if (s < 1e-6) s = 1e-6
                                   d = (a - b) / s; d = d < 0 ? -d : d; if (d > worst) worst = d }
        printf "%s torch: worst rel diff cuda vs cpu %.3g\n", (n > 3 && worst <= 1e-10) ? "PASS" : "FAIL", worst
        exit !(n > 3 && worst <= 1e-10) }' "$work/gpu_check_torch.log"
