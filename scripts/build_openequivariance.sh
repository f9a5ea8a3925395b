#!/usr/bin/env bash
# Builds OpenEquivariance (PyPI source distribution; its `pip install` downloads a LibTorch and
# fails offline) against the torch of PYTHON, into OUT:
#   OUT/lib/liboeq_stable_cuda_aoti.so    the ops pair_style distspec loads before a graph that
#                                         calls them (DISTSPEC_OPENEQUIVARIANCE_LIBRARY, or the
#                                         CMake option of the same name)
#   OUT/site/openequivariance             the Python package with its extension in place, for
#                                         the exporter (PYTHONPATH=OUT/site), where nanobind and
#                                         the interpreter's headers exist
#
#   scripts/build_openequivariance.sh PYTHON OUT [SDIST]
#
# SDIST: openequivariance-0.7.0.tar.gz; default: $DISTSPEC_CACHE/src/, fetched from the package
# index pip is configured with when missing. Needs the CUDA toolkit (nvcc's folder: NVRTC, cuBLAS);
# compiles C++ only (the kernels are compiled at run time by NVRTC), so it builds on a machine
# without a GPU. Prints "OEQ_LIBRARY <path>".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:?usage: build_openequivariance.sh PYTHON OUT [SDIST]}
out=$(realpath -m "${2:?usage: build_openequivariance.sh PYTHON OUT [SDIST]}")
version=0.7.0
cache=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
sdist=${3:-$cache/src/openequivariance-$version.tar.gz}
if [ ! -f "$sdist" ]; then
  mkdir -p "$(dirname "$sdist")"
  # --no-binary for this package alone (`:all:` builds its build requirements, CMake among them, from source)
  "$python" -m pip download --no-deps --no-binary openequivariance --disable-pip-version-check -q \
    -d "$(dirname "$sdist")" "openequivariance==$version" ||
    { echo "build_openequivariance: cannot fetch openequivariance==$version; give SDIST" >&2; exit 1; }
fi
torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))') ||
  { echo "build_openequivariance: $python cannot import torch" >&2; exit 1; }
work=$out/build
rm -rf "$work" && mkdir -p "$work/src"
tar xzf "$sdist" -C "$work/src" --strip-components=1
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root/cmake/openequivariance" -B "$work/cmake" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DOEQ_SOURCE_DIR="$work/src" -DTORCH_PACKAGE_DIR="$torch_dir" -DPython_EXECUTABLE="$(command -v "$python")" \
  -DCMAKE_INSTALL_PREFIX="$out/lib" > "$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; exit 1; }
cmake --build "$work/cmake" -j "${DISTSPEC_JOBS:-$(nproc)}" > "$work/build.log" 2>&1 || { grep -m5 -A5 error "$work/build.log"; exit 1; }
cmake --install "$work/cmake" > /dev/null
# The Python package, with its extension where openequivariance/_torch/extlib looks for it.
rm -rf "$out/site" && mkdir -p "$out/site"
cp -a "$work/src/openequivariance" "$out/site/"
cp "$out"/lib/*.so "$out/site/openequivariance/_torch/extlib/"
mkdir -p "$out/site/openequivariance-$version.dist-info"
printf 'Metadata-Version: 2.1\nName: openequivariance\nVersion: %s\n' "$version" \
  > "$out/site/openequivariance-$version.dist-info/METADATA"
rm -rf "$work"
echo "OEQ_LIBRARY $out/lib/liboeq_stable_cuda_aoti.so"
