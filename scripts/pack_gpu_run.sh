#!/usr/bin/env bash
# Packs what a GPU machine without LAMMPS, MPI or Debian packages needs to run DISTSPEC's GPU
# tests and benchmarks under MPI: the LAMMPS 4 Feb 2025 build (lmp, liblammps), the plugin and
# test/benchmark binaries of a CUDA build, and Debian's OpenMPI runtime (libraries, MCA and PMIx
# components, help files, mpirun) relocated under one folder.
#   scripts/pack_gpu_run.sh [BUILD_DIR] [OUT_DIR]
#     BUILD_DIR  a DISTSPEC build against LAMMPS 2025 with CUDA (default build/lammps-20250204)
#     OUT_DIR    default build-gpu-run
# On the GPU machine: `source OUT_DIR/env.sh`, then mpirun, lmp and the test binaries run as here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build/lammps-20250204}")
out=$(realpath -m "${2:-$root/build-gpu-run}")
# shellcheck source=/dev/null
source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
lammps=$DISTSPEC_LAMMPS_2025/build
grep -q "DISTSPEC_ENABLE_CUDA:BOOL=ON" "$build/CMakeCache.txt" ||
  { echo "pack_gpu_run: $build is not a CUDA build (configure with -DDISTSPEC_ENABLE_CUDA=ON)" >&2; exit 1; }

rm -rf "$out"
# shellcheck source=scripts/pack_openmpi.sh
source "$root/scripts/pack_openmpi.sh"
pack_openmpi "$out"

# DISTSPEC and LAMMPS.
cp "$lammps/lmp" "$out/bin/"
cp -L "$lammps/liblammps.so.0" "$out/lib/"
cp -L "$build/libdistspec.so" "$out/lib/"
for exe in unittest/integration/distspec_integration_tests unittest/gpu/distspec_gpu_tests bench/gpu/bench_gpu_models; do
  [ -f "$build/$exe" ] && cp "$build/$exe" "$out/bin/"
done
pack_libraries "$out" "$out"/bin/* "$out"/lib/liblammps.so.0 "$out"/lib/libdistspec.so
echo 'export DISTSPEC_PLUGIN="$distspec_run/lib/libdistspec.so"' >> "$out/env.sh"
du -sh "$out"
