#!/usr/bin/env bash
# Packs what a GPU machine without LAMMPS, MPI or Debian packages needs to build LAMMPS and the
# plugin there, against that machine's own LibTorch and CUDA (scripts/gpu_build.sh): the LAMMPS
# 4 Feb 2025 source from Debian's orig tarball, trimmed to the core and the packages the build
# enables (about 3 MB), Debian's OpenMPI runtime and headers, and nlohmann_json.
#   scripts/pack_gpu_source.sh [--sevenn] [OUT_DIR]     default build-gpu-src
#     --sevenn  also what bench/sevennet_gpu/run.sh needs there beside that machine's torch:
#               sevenn with SevenNet-0's checkpoint only, ase and e3nn from the bootstrap's
#               sevenn environment (OUT_DIR/site, for PYTHONPATH), and the specs nvalchemi saves
#               here (OUT_DIR/specs, for DISTSPEC_SPECS). About 20 MB.
# Carry OUT_DIR and run `scripts/gpu_build.sh OUT_DIR BUILD_DIR` there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sevenn=0
if [ "${1:-}" = --sevenn ]; then sevenn=1; shift; fi
out=$(realpath -m "${1:-$root/build-gpu-src}")
cache=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
tarball=$cache/src/lammps_20250204+dfsg.1.orig.tar.xz
[ -f "$tarball.ok" ] || { echo "pack_gpu_source: $tarball is missing: run scripts/bootstrap.sh first" >&2; exit 1; }

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
for pkg in fmt PLUGIN MANYBODY KSPACE MOLECULE STUBS; do cp -a "$tmp/src/$pkg" "$tmp/trim/src/"; done
tar cJf "$out/lammps-source.tar.xz" -C "$tmp/trim" .

cp -a /usr/include/nlohmann "$out/json/include/"
cp -a /usr/share/cmake/nlohmann_json "$out/json/share/cmake/"

if [ $sevenn = 1 ]; then
  # shellcheck source=/dev/null
  source "$cache/env.sh"
  site=$("$DISTSPEC_PYTHON_SEVENN" -c 'import sevenn, os; print(os.path.dirname(os.path.dirname(sevenn.__file__)))')
  mkdir -p "$out/site"
  for pkg in sevenn ase e3nn; do cp -a "$site/$pkg" "$site/$pkg"-*.dist-info "$out/site/"; done
  # Only SevenNet-0 (11Jul2024): the other checkpoints, the C++ pair styles and the tests stay.
  find "$out/site/sevenn/pretrained_potentials" -mindepth 1 -maxdepth 1 ! -name SevenNet_0__11Jul2024 -exec rm -rf {} +
  rm -rf "$out/site/sevenn/pair_e3gnn" "$out"/site/sevenn/pair_d3*.so "$out/site/ase/test" "$out/site/ase/gui"
  find "$out/site" -name __pycache__ -prune -exec rm -rf {} +
  "$DISTSPEC_PYTHON" "$root/bench/sevennet_gpu/specs.py" "$out/specs" >/dev/null
fi
du -sh "$out"
