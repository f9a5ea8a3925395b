#!/usr/bin/env bash
# Builds DISTSPEC (core, models, plugin, tests) against every LAMMPS the bootstrap prepared:
#   build/lammps-20210929  (LAMMPS 29 Sep 2021 + KOKKOS)
#   build/lammps-20250204  (LAMMPS 4 Feb 2025, CPU)   when its sources were available
# Prints the build folders, one per line, on the last lines as "BUILD <dir>".
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
# shellcheck source=/dev/null
source "$CACHE/env.sh"
JOBS=${DISTSPEC_JOBS:-$(nproc)}

build_against() {
  local lammps=$1 tag=$2 dir="$here/build/lammps-$2"
  shift 2
  cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLAMMPS_SOURCE_DIR="$lammps/source" -DLAMMPS_BUILD_DIR="$lammps/build" \
    -DDISTSPEC_PYTHON="${DISTSPEC_PYTHON:-}" -DDISTSPEC_PYTHON_MACE="${DISTSPEC_PYTHON_MACE:-}" \
    -DDISTSPEC_PYTHON_SEVENN="${DISTSPEC_PYTHON_SEVENN:-}" \
    "$@" > "$dir.configure.log" 2>&1 \
    || { mkdir -p "$(dirname "$dir")"; cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "$JOBS" 2>&1 | tail -n 3
  [ "${PIPESTATUS[0]}" = 0 ] || exit 1
  echo "BUILD $dir"
}

mkdir -p "$here/build"
build_against "$DISTSPEC_LAMMPS_2021" 20210929 "$@"
if [ -n "${DISTSPEC_LAMMPS_2025:-}" ]; then
  build_against "$DISTSPEC_LAMMPS_2025" 20250204 "$@"
fi
