#!/usr/bin/env bash
# Packs what a GPU machine without LAMMPS, MPI or Debian packages needs to build LAMMPS and the
# plugin there, against that machine's own LibTorch and CUDA (scripts/gpu_build.sh): the LAMMPS
# 4 Feb 2025 source from Debian's orig tarball, trimmed to the core and the packages the build
# enables (about 3 MB), Debian's OpenMPI runtime and headers, nlohmann_json and FFTW3.
#   scripts/pack_gpu_source.sh [--sevenn] [--kokkos] [--torch-fixtures DIR] [OUT_DIR]   default build-gpu-src
#     --sevenn  also what bench/sevennet_gpu/run.sh needs there beside that machine's torch:
#               sevenn with SevenNet-0's checkpoint only, ase, e3nn and braceexpand (which
#               sevenn's calculator imports and the GPU machine's torch environment lacks) from the
#               bootstrap's sevenn environment (OUT_DIR/site, for PYTHONPATH), and the specs nvalchemi saves
#               here (OUT_DIR/specs, for DISTSPEC_SPECS). About 20 MB.
#     --kokkos  instead of the 2025 source, what scripts/gpu_build_kokkos.sh builds a KOKKOS-for-CUDA LAMMPS from:
#               LAMMPS 29 Sep 2021 (bookworm's orig tarball) trimmed with its KOKKOS package,
#               Kokkos 3.4.01 (packages/kokkos of bookworm's trilinos) and Debian's GoogleTest
#               source, for the integration tests. About 30 MB; with --sevenn too (the torch
#               kk_gpu cases and bench/torch_kk_gpu), about 50 MB.
#     --torch-fixtures DIR
#               also the TorchScript fixtures the kk_gpu cases of unittest/torch/cases run (MACE,
#               NequIP, Allegro, AIMNet2, the toy MPNN), from the test command's fixtures folder DIR
#               ($DISTSPEC_CACHE/torch-fixtures): their model files, specs, graphs, reference files and data
#               files (OUT_DIR/fixtures, about 2 MB). A TorchScript graph's devices follow its
#               positions and the GPU machine's older LibTorch reads it, so these need no export
#               there (the machine's torch has none of these models' packages).
# Carry OUT_DIR and run `scripts/gpu_build.sh OUT_DIR BUILD_DIR` (or gpu_build_kokkos.sh) there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sevenn=0 kokkos=0 fixtures=
while [ $# -gt 0 ]; do
  case "$1" in
    --sevenn) sevenn=1; shift ;;
    --kokkos) kokkos=1; shift ;;
    --torch-fixtures) fixtures=$(realpath "${2:?--torch-fixtures needs the fixtures folder}"); shift 2 ;;
    *) break ;;
  esac
done
out=$(realpath -m "${1:-$root/build-gpu-src}")
cache=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
tarball=$cache/src/lammps_20250204+dfsg.1.orig.tar.xz
lammps_packages=(fmt PLUGIN MANYBODY KSPACE MOLECULE STUBS)
if [ $kokkos = 1 ]; then
  tarball=$cache/src/lammps_20220106.git7586adbb6a+ds1.orig.tar.xz
  lammps_packages+=(KOKKOS)
fi
for f in "$tarball" "$cache/src/trilinos_13.2.0.orig.tar.gz"; do
  [ $kokkos = 1 ] || [ "$f" = "$tarball" ] || continue
  [ -f "$f.ok" ] || { echo "pack_gpu_source: $f is missing: run scripts/bootstrap.sh first" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/json/include" "$out/json/share/cmake"
# shellcheck source=scripts/pack_openmpi.sh
source "$root/scripts/pack_openmpi.sh"
pack_openmpi "$out"

# LAMMPS: cmake/, the files of src/ itself and the package folders the build enables.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xJf "$tarball" -C "$tmp" --strip-components=1 --wildcards '*/cmake/*' '*/src/*'
mkdir -p "$tmp/trim/src"
cp -a "$tmp/cmake" "$tmp/trim/"
find "$tmp/src" -maxdepth 1 -type f -exec cp {} "$tmp/trim/src/" \;
for pkg in "${lammps_packages[@]}"; do [ -d "$tmp/src/$pkg" ] && cp -a "$tmp/src/$pkg" "$tmp/trim/src/"; done
tar cJf "$out/lammps-source.tar.xz" -C "$tmp/trim" .

if [ $kokkos = 1 ]; then
  # Kokkos: packages/kokkos as it is (2 MB compressed; its CMake expects every subpackage folder).
  mkdir -p "$tmp/kokkos"
  tar xzf "$cache/src/trilinos_13.2.0.orig.tar.gz" -C "$tmp/kokkos" --strip-components=3 --wildcards '*/packages/kokkos/*'
  tar cJf "$out/kokkos-source.tar.xz" -C "$tmp/kokkos" .
  tar cJf "$out/googletest-source.tar.xz" -C /usr/src googletest
fi

cp -a /usr/include/nlohmann "$out/json/include/"
# FFTW3 (Debian's libfftw3-dev, which the bootstrap installs): the PME model's CPU FFTs, so that
# the GPU build runs PME on both devices.
if [ -f /usr/include/fftw3.h ]; then
  mkdir -p "$out/fftw/include" "$out/fftw/lib"
  cp /usr/include/fftw3.h "$out/fftw/include/"
  cp -L /usr/lib/x86_64-linux-gnu/libfftw3.so "$out/fftw/lib/"
  cp -L /usr/lib/x86_64-linux-gnu/libfftw3.so.3 "$out/lib/"
fi
cp -a /usr/share/cmake/nlohmann_json "$out/json/share/cmake/"

if [ $sevenn = 1 ]; then
  # shellcheck source=/dev/null
  source "$cache/env.sh"
  site=$("$DISTSPEC_PYTHON_SEVENN" -c 'import sevenn, os; print(os.path.dirname(os.path.dirname(sevenn.__file__)))')
  mkdir -p "$out/site"
  for pkg in sevenn ase e3nn braceexpand; do cp -a "$site/$pkg" "$site/$pkg"-*.dist-info "$out/site/"; done
  # Only SevenNet-0 (11Jul2024): the other checkpoints, the C++ pair styles and the tests stay.
  find "$out/site/sevenn/pretrained_potentials" -mindepth 1 -maxdepth 1 ! -name SevenNet_0__11Jul2024 -exec rm -rf {} +
  rm -rf "$out/site/sevenn/pair_e3gnn" "$out"/site/sevenn/pair_d3*.so "$out/site/ase/test" "$out/site/ase/gui"
  find "$out/site" -name __pycache__ -prune -exec rm -rf {} +
  "$DISTSPEC_PYTHON" "$root/bench/sevennet_gpu/specs.py" "$out/specs" >/dev/null
fi
if [ -n "$fixtures" ]; then
  python3 - "$root/unittest/torch/cases" "$fixtures" "$out/fixtures" <<'PY'
import json, re, shutil, sys
from pathlib import Path
cases, src, dst = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
dst.mkdir(parents=True, exist_ok=True)
files, missing = set(), []
for case in sorted(cases.glob("*kk_gpu.json")):
    named = set(re.findall(r"\$\{torch_fixtures\}/([A-Za-z0-9_.]+)", case.read_text()))
    models = [n for n in named if n.endswith(".json") and not n.startswith("ref_")]
    params = {m: json.loads((src / m).read_text()).get("parameters", {}) for m in models if (src / m).is_file()}
    # Only cases whose every model is TorchScript of calling convention 1: the others' graphs are
    # exported on the GPU machine (scripts/gpu_torch_fixtures.sh).
    if len(params) != len(models) or any(p.get("format") != "torchscript" or p.get("contract") != 1
                                         for p in params.values()):
        continue
    for m, p in params.items():
        named |= {p["graph"], json.loads((src / m).read_text())["spec"]}
    files |= named
for name in sorted(files):
    (shutil.copy2(src / name, dst / name) if (src / name).is_file() else missing.append(name))
if missing:
    sys.exit(f"pack_gpu_source: {', '.join(missing)} not in {src}: run the test command's torch fixtures first")
print(f"pack_gpu_source: {len(files)} TorchScript fixture files in {dst}")
PY
fi
du -sh "$out"
