#!/usr/bin/env bash
# Builds here, on a machine without a GPU, what a GPU machine needs to run exported torch graphs
# under MPI, so that none of its device time goes to compiling: the plugin with CUDA and the
# torch model kind, linked against the very LibTorch the GPU machine has (the torch wheel of
# the same version and CUDA build, from PyPI), then packed with LAMMPS 4 Feb 2025 and Debian's
# OpenMPI as scripts/pack_gpu_run.sh packs them. LibTorch and the CUDA libraries are not packed:
# the GPU machine's own torch provides them (env.sh finds them through its python3).
#   scripts/pack_gpu_torch_run.sh [OUT_DIR]          default build-gpu-torch-run
# Environment:
#   DISTSPEC_GPU_TORCH_VERSION   the GPU machine's torch (default 2.11.0, ../shared/GPU.md)
#   DISTSPEC_CUDA_ARCHITECTURES  default 90 (H100, H200)
# On the GPU machine: `source OUT_DIR/env.sh`; DISTSPEC_PLUGIN and DISTSPEC_LMP are then set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/build-gpu-torch-run}")
version=${DISTSPEC_GPU_TORCH_VERSION:-2.11.0}
# shellcheck source=/dev/null
source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
# shellcheck source=scripts/ccache_env.sh
source "$root/scripts/ccache_env.sh"
[ -n "${DISTSPEC_LAMMPS_2025:-}" ] || { echo "pack_gpu_torch_run: no LAMMPS 4 Feb 2025 build (run scripts/bootstrap.sh)" >&2; exit 1; }
start=$(date +%s)

# LibTorch of the GPU machine's version: the wheel alone, without the CUDA libraries it pulls in
# (a shared library links without its dependencies' dependencies; the GPU machine has them).
venv=$DISTSPEC_CACHE/gpu-torch-$version
if [ ! -f "$venv/.installed" ]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --no-deps "torch==$version"
  touch "$venv/.installed"
fi
# torch does not import without the CUDA libraries left out: its version file says the build.
site=$(echo "$venv"/lib/python3*/site-packages)
cuda=$(sed -n "s/^cuda: .* = '\(.*\)'$/\1/p" "$site/torch/version.py")
[ -n "$cuda" ] || { echo "pack_gpu_torch_run: torch $version from PyPI is not a CUDA build" >&2; exit 1; }
echo "pack_gpu_torch_run: LibTorch $version (CUDA $cuda), nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" >&2

build=$root/build/gpu-torch-$version
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLAMMPS_SOURCE_DIR="$DISTSPEC_LAMMPS_2025/source" -DLAMMPS_BUILD_DIR="$DISTSPEC_LAMMPS_2025/build" \
  -DTorch_DIR="$site/torch/share/cmake/Torch" -DDISTSPEC_ENABLE_CUDA=ON -DDISTSPEC_ENABLE_TORCH=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${DISTSPEC_CUDA_ARCHITECTURES:-90}" \
  -DDISTSPEC_BUILD_TESTS=OFF -DDISTSPEC_BUILD_BENCH=OFF > "$build.configure.log" 2>&1 ||
  { tail -30 "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j "${DISTSPEC_JOBS:-2}" --target distspec_plugin distspec_mace_ops > "$build.build.log" 2>&1 ||
  { grep -m10 -B2 -A10 "error" "$build.build.log" >&2; exit 1; }
echo "pack_gpu_torch_run: plugin built in $(( $(date +%s) - start )) s" >&2

# shellcheck source=scripts/pack_openmpi.sh
source "$root/scripts/pack_openmpi.sh"
rm -rf "$out"
pack_openmpi "$out"
cp "$DISTSPEC_LAMMPS_2025/build/lmp" "$out/bin/"
cp -L "$DISTSPEC_LAMMPS_2025/build/liblammps.so.0" "$out/lib/"
cp -L "$build/libdistspec.so" "$build/libdistspec_mace_ops.so" "$out/lib/"  # the MACE kernels beside the plugin, where it looks
# Everything the binaries load but LibTorch, CUDA and what torch's wheel brings along, and the C++
# runtime: the machine's own is at least as new as Debian 12's (torch's wheel and what its g++
# compiles there, OpenEquivariance's ops, need it), and one packed here would come first.
skip='^(libtorch|libc10|libcaffe2|libcuda|libcudart|libcublas|libcufft|libcurand|libcusparse|libcusolver|libnv|libcudnn|libnccl|libgomp|libshm|libstdc\+\+|libgcc_s)'
LD_LIBRARY_PATH="$site/torch/lib" pack_libraries "$out" "$out/bin/lmp" "$out/lib/liblammps.so.0" \
  2>/dev/null
find "$out/lib" -maxdepth 1 -type f | while read -r f; do
  if basename "$f" | grep -Eq "$skip"; then rm -f "$f"; fi
done
# Nsight Systems' stream importer on the GPU machines (QdstrmImporter) needs elfutils' libdw, which
# one H100 machine lacked ("libdw.so.1: cannot open shared object file"), so a profile came back
# as a stream no report could be made from. Debian's, on the path env.sh sets, which nsys's
# children inherit.
for lib in libdw.so.1 libelf.so.1; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$out/lib/" 2>/dev/null ||
    echo "pack_gpu_torch_run: no $lib here (apt-get install libdw1): nsys may not import its reports there" >&2
done
# Within the 64 MiB a device call carries: no symbols, and no headers (nothing is built there).
strip --strip-unneeded "$out/bin/lmp" "$out/lib/liblammps.so.0" "$out/lib/libdistspec.so" "$out/lib/libdistspec_mace_ops.so"
rm -rf "$out/include"
# The plugin's own libraries, LibTorch's left out, are those of LAMMPS and OpenMPI already packed.
cat >> "$out/env.sh" <<'ENV'
# LibTorch and the CUDA libraries of this machine's own torch (the version the plugin was built
# against), after the packed libraries.
torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
nvidia_libs=$(python3 -c 'import glob, os, torch; print(":".join(glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib"))))')
export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$torch_lib${nvidia_libs:+:$nvidia_libs}"
export DISTSPEC_PLUGIN="$distspec_run/lib/libdistspec.so" DISTSPEC_LMP="$distspec_run/bin/lmp"
ENV
echo "$version" > "$out/torch_version"
du -sh "$out" >&2
