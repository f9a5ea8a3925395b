#!/usr/bin/env bash
# On a GPU machine without LAMMPS, MPI or Debian packages (the bundle scripts/pack_gpu_source.sh
# made, carried there): builds LAMMPS 4 Feb 2025 with the options of scripts/bootstrap.sh, then
# the plugin with CUDA and the torch model kind against that machine's own LibTorch (the torch
# of DISTSPEC_PYTHON, default python3). Tests and benchmarks are not built (no GoogleTest there).
#   scripts/gpu_build.sh BUNDLE [BUILD_DIR]     default BUILD_DIR build-gpu
# DISTSPEC_GPU_TORCH=OFF leaves the torch kind out (the native models only: a faster build, for
# scripts/gpu_check.sh). Prints "PLUGIN <path>" and "LMP <path>"; `source BUNDLE/env.sh` puts mpirun and the libraries
# on the paths.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath "${1:?usage: gpu_build.sh BUNDLE [BUILD_DIR]}")
build=$(realpath -m "${2:-$root/build-gpu}")
jobs=${DISTSPEC_JOBS:-$(nproc)}
# shellcheck source=/dev/null
source "$bundle/env.sh"
# shellcheck source=scripts/lammps_options.sh
source "$root/scripts/lammps_options.sh"
start=$(date +%s)

lammps=$build/lammps
if [ ! -f "$lammps/build/.built" ]; then
  rm -rf "$lammps" && mkdir -p "$lammps/source"
  tar xJf "$bundle/lammps-source.tar.xz" -C "$lammps/source"
  cmake -S "$lammps/source/cmake" -B "$lammps/build" -G Ninja "${LAMMPS_COMMON[@]}" -DBUILD_OMP=OFF \
    "${DISTSPEC_MPI_CMAKE_ARGS[@]}" > "$lammps/configure.log" || { tail -30 "$lammps/configure.log"; exit 1; }
  cmake --build "$lammps/build" -j "$jobs" > "$lammps/build.log" || { grep -m5 -A5 "error" "$lammps/build.log"; exit 1; }
  touch "$lammps/build/.built"
fi
echo "gpu_build: LAMMPS in $(( $(date +%s) - start )) s" >&2

plugin=$build/plugin
bundle_fftw_args "$bundle"
cmake -S "$root" -B "$plugin" -G Ninja -DCMAKE_BUILD_TYPE=Release "${FFTW_ARGS[@]}" \
  -DLAMMPS_SOURCE_DIR="$lammps/source" -DLAMMPS_BUILD_DIR="$lammps/build" \
  -Dnlohmann_json_DIR="$bundle/json/share/cmake/nlohmann_json" \
  -DDISTSPEC_PYTHON="${DISTSPEC_PYTHON:-$(command -v python3)}" -DDISTSPEC_ENABLE_CUDA=ON -DDISTSPEC_ENABLE_TORCH="${DISTSPEC_GPU_TORCH:-ON}" \
  -DDISTSPEC_BUILD_TESTS=OFF -DDISTSPEC_BUILD_BENCH=OFF "${DISTSPEC_MPI_CMAKE_ARGS[@]}" > "$build/plugin-configure.log" ||
  { tail -30 "$build/plugin-configure.log"; exit 1; }
cmake --build "$plugin" -j "$jobs" > "$build/plugin-build.log" || { grep -m10 -B2 -A10 "error" "$build/plugin-build.log"; exit 1; }
echo "gpu_build: plugin in $(( $(date +%s) - start )) s" >&2
echo "PLUGIN $plugin/libdistspec.so"
echo "LMP $lammps/build/lmp"
