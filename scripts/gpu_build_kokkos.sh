#!/usr/bin/env bash
# Builds, on a machine with nvcc and CMake (a GPU machine without LAMMPS, MPI or Debian packages
# included), the KOKKOS-for-CUDA LAMMPS that distspec/kk runs on GPUs with, and the plugin and
# its integration tests against it, from the bundle scripts/pack_gpu_source.sh --kokkos made:
#   1. Kokkos 3.4.01 (bookworm's trilinos 13.2.0), patched for CUDA 13
#      (scripts/patches/kokkos-3.4.01-cuda13.patch): CUDA + Serial, CUDA lambdas, shared
#      libraries, AMPERE80 (sm_80 code with its PTX: Kokkos 3.4 has no Hopper option, and the
#      driver builds sm_90 code from the PTX once, into its cache);
#   2. LAMMPS 29 Sep 2021 Update 2 with KOKKOS and the options of scripts/lammps_options.sh
#      but KSPACE and MOLECULE, against the bundle's OpenMPI;
#   3. GoogleTest (Debian's source), then the plugin with CUDA kernels for sm_90 and the
#      integration tests (the `gpu` label holds the distspec/kk GPU tests).
#   scripts/gpu_build_kokkos.sh BUNDLE [BUILD_DIR]     default BUILD_DIR build-gpu-kokkos
# DISTSPEC_GPU_TORCH=ON adds the torch model kind against the machine's own LibTorch (the torch
# of python3, or of DISTSPEC_PYTHON) and the torch LAMMPS tests (their kk_gpu cases: exported
# models resident on the GPU under distspec/kk).
# Stages 1-3 are cached under DISTSPEC_CACHE (default ~/.cache/distspec), keyed by versions and
# options, and skipped when built. Prints "PLUGIN <path>", "LMP <path>" and "TESTS <path>";
# `source BUNDLE/env.sh` and `source BUILD_DIR/env.sh` put mpirun and the libraries on the paths.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath "${1:?usage: gpu_build_kokkos.sh BUNDLE [BUILD_DIR]}")
build=$(realpath -m "${2:-$root/build-gpu-kokkos}")
jobs=${DISTSPEC_JOBS:-$(nproc)}
cache=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
# shellcheck source=/dev/null
source "$bundle/env.sh"
# shellcheck source=scripts/lammps_options.sh
source "$root/scripts/lammps_options.sh"
start=$(date +%s)
say() { echo "gpu_build_kokkos: $* ($(( $(date +%s) - start )) s)" >&2; }
command -v nvcc >/dev/null || { echo "gpu_build_kokkos: no nvcc on PATH" >&2; exit 1; }
cuda=$(nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
mkdir -p "$cache" "$build"
# Ninja where the machine has it (clearer errors, faster no-op rebuilds), else Makefiles.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# run_logged LOG CMD...: CMD's output into LOG; on failure its errors, and exit.
run_logged() {
  local logf=$1; shift
  "$@" > "$logf" 2>&1 || { grep -m10 -B2 -A8 -E "error:|Error[ :]|\*\*\*|FAILED" "$logf" || tail -40 "$logf"; echo "gpu_build_kokkos: failed, log $logf" >&2; exit 1; }
}

# 1. Kokkos
kokkos=$cache/kokkos-3.4.01-cuda$cuda-ampere80-serial-shared-cxx17
if [ ! -f "$kokkos/.built" ]; then
  src=$build/kokkos-src
  rm -rf "$src" "$build/kokkos-build" && mkdir -p "$src"
  tar xJf "$bundle/kokkos-source.tar.xz" -C "$src"
  patch -s -p1 -d "$src" < "$root/scripts/patches/kokkos-3.4.01-cuda13.patch"
  run_logged "$build/kokkos-configure.log" cmake -S "$src" -B "$build/kokkos-build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$kokkos" -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper" \
    -DBUILD_SHARED_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_CUDA=ON \
    -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON -DKokkos_ENABLE_TESTS=OFF
  run_logged "$build/kokkos-build.log" cmake --build "$build/kokkos-build" -j "$jobs"
  run_logged "$build/kokkos-install.log" cmake --install "$build/kokkos-build"
  rm -rf "$src" "$build/kokkos-build"
  touch "$kokkos/.built"
fi
kokkos_dir=$(dirname "$(ls "$kokkos"/lib*/cmake/Kokkos/KokkosConfig.cmake)")
# Kokkos 3.4 writes the CUDA include folders CMake 4 reports (include and include/cccl) as one
# quoted path into its exported configuration: split them into a list again (idempotent).
python3 "$root/scripts/fix_kokkos_include_lists.py" "$kokkos_dir"/*.cmake >&2
say "Kokkos ready"

# 2. LAMMPS 2021 with KOKKOS for CUDA
# KSPACE and MOLECULE stay out here: the GPU tests and benchmarks need neither, and their KOKKOS
# styles would add a fifth to the build (the plugin's headers do not depend on them).
lammps=$cache/lammps-20210929u2-mpi-kokkos-cuda$cuda-ampere80-plugin-manybody
if [ ! -f "$lammps/build/.built" ]; then
  rm -rf "$lammps" && mkdir -p "$lammps/source"
  tar xJf "$bundle/lammps-source.tar.xz" -C "$lammps/source"
  run_logged "$lammps/configure.log" cmake -S "$lammps/source/cmake" -B "$lammps/build" "${generator[@]}" "${LAMMPS_COMMON[@]}" \
    -DBUILD_OMP=OFF -DPKG_KOKKOS=ON -DEXTERNAL_KOKKOS=ON -DKokkos_DIR="$kokkos_dir" \
    -DCMAKE_PROJECT_INCLUDE="$root/cmake/CudaToolkitFirst.cmake" \
    -DPKG_KSPACE=OFF -DPKG_MOLECULE=OFF -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" "${DISTSPEC_MPI_CMAKE_ARGS[@]}"
  run_logged "$lammps/build.log" cmake --build "$lammps/build" -j "$jobs"
  touch "$lammps/build/.built"
fi
say "LAMMPS ready"

# 3. GoogleTest, the plugin and the integration tests
gtest=$cache/googletest-debian12
if [ ! -f "$gtest/.built" ]; then
  rm -rf "$build/gtest-src" && mkdir -p "$build/gtest-src"
  tar xJf "$bundle/googletest-source.tar.xz" -C "$build/gtest-src"
  run_logged "$build/gtest.log" cmake -S "$build/gtest-src/googletest" -B "$build/gtest-build" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$gtest" -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  run_logged "$build/gtest-build.log" cmake --build "$build/gtest-build" -j "$jobs" --target install
  rm -rf "$build/gtest-src" "$build/gtest-build"
  touch "$gtest/.built"
fi
plugin=$build/plugin
torch=${DISTSPEC_GPU_TORCH:-OFF} python=
[ "$torch" = ON ] && python=${DISTSPEC_PYTHON:-$(command -v python3)}
# The bundle's FFTW3: the PME model's CPU FFTs, for the checks of PME on the GPU against the CPU.
bundle_fftw_args "$bundle"
run_logged "$build/plugin-configure.log" cmake -S "$root" -B "$plugin" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${FFTW_ARGS[@]}" \
  -DLAMMPS_SOURCE_DIR="$lammps/source" -DLAMMPS_BUILD_DIR="$lammps/build" \
  -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_PREFIX_PATH="$gtest" \
  -Dnlohmann_json_DIR="$bundle/json/share/cmake/nlohmann_json" \
  -DDISTSPEC_ENABLE_CUDA=ON -DDISTSPEC_ENABLE_TORCH="$torch" -DDISTSPEC_PYTHON="$python" \
  -DDISTSPEC_BUILD_TESTS=ON -DDISTSPEC_BUILD_BENCH=OFF "${DISTSPEC_MPI_CMAKE_ARGS[@]}"
# DISTSPEC_GPU_PLUGIN_ONLY=1: the plugin alone (for scripts/gpu_check_torch_kk.sh and the benchmarks).
targets=(distspec_plugin)
if [ "${DISTSPEC_GPU_PLUGIN_ONLY:-0}" != 1 ]; then
  targets+=(distspec_integration_tests)
  [ "$torch" = ON ] && targets+=(distspec_torch_lammps_tests)
fi
run_logged "$build/plugin-build.log" cmake --build "$plugin" -j "$jobs" --target "${targets[@]}"
cat > "$build/env.sh" <<ENV
# Sourced after the bundle's env.sh: Kokkos' and LAMMPS' shared libraries.
export LD_LIBRARY_PATH="$(dirname "$(ls "$kokkos"/lib*/libkokkoscore.so)"):$lammps/build\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
ENV
say "plugin ready"
echo "PLUGIN $plugin/libdistspec.so"
echo "LMP $lammps/build/lmp"
echo "TESTS $plugin/unittest/integration/distspec_integration_tests"
[ "$torch" = ON ] && echo "TORCH_TESTS $plugin/unittest/torch/distspec_torch_lammps_tests"
exit 0
