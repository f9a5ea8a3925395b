#!/usr/bin/env bash
# Builds DISTSPEC (core, models, plugin, tests) against every LAMMPS the bootstrap prepared:
#   build/lammps-20210929  (LAMMPS 29 Sep 2021 + KOKKOS)
#   build/lammps-20250204  (LAMMPS 4 Feb 2025, CPU)   when its sources were available
#   build/lammps-20260704  (LAMMPS 4 Jul 2026, CPU)   when the bootstrap built it, without the CUDA
#                          kernels (the other two builds compile them; no GPU runs them here)
# Prints the build folders, one per line, on the last lines as "BUILD <dir>".
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
# shellcheck source=/dev/null
source "$CACHE/env.sh"
# shellcheck source=scripts/ccache_env.sh
source "$here/scripts/ccache_env.sh"
JOBS=${DISTSPEC_JOBS:-$(nproc)}

# build_against LAMMPS TAG [CMAKE ARGS...]; BUILD_TARGETS (a list) limits what is built.
# The torch test fixtures (exported models and references: no LAMMPS in them, 10 to 20 minutes
# of AOTInductor compiles on 2 cores) are shared by the builds and kept in the cache beside
# LAMMPS ($CACHE/torch-fixtures, or DISTSPEC_TORCH_FIXTURES_DIR): each set is remade only when
# the sources that make it or the library versions change (make_fixtures.py keys its manifest by
# them), so a warm machine's fresh clone of an unchanged exporter skips them.
build_against() {
  local lammps=$1 tag=$2
  local dir="$here/build/lammps-$tag"
  shift 2
  local targets=() names=()
  read -r -a names <<< "${BUILD_TARGETS:-}"
  [ ${#names[@]} -gt 0 ] && targets=(--target "${names[@]}")
  cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDISTSPEC_BUILD_TESTS=ON \
    -DLAMMPS_SOURCE_DIR="$lammps/source" -DLAMMPS_BUILD_DIR="$lammps/build" \
    -DDISTSPEC_PYTHON="${DISTSPEC_PYTHON:-}" -DDISTSPEC_PYTHON_MACE="${DISTSPEC_PYTHON_MACE:-}" \
    -DDISTSPEC_PYTHON_SEVENN="${DISTSPEC_PYTHON_SEVENN:-}" \
    -DDISTSPEC_TORCH_FIXTURES="${DISTSPEC_TORCH_FIXTURES_DIR:-$CACHE/torch-fixtures}" \
    "$@" > "$dir.configure.log" 2>&1 \
    || { mkdir -p "$(dirname "$dir")"; cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "$JOBS" "${targets[@]}" 2>&1 | tail -n 3
  [ "${PIPESTATUS[0]}" = 0 ] || exit 1
  echo "BUILD $dir"
}

mkdir -p "$here/build"
build_against "$DISTSPEC_LAMMPS_2021" 20210929 "$@"
if [ -n "${DISTSPEC_LAMMPS_2025:-}" ]; then
  build_against "$DISTSPEC_LAMMPS_2025" 20250204 "$@"
fi
if [ -n "${DISTSPEC_LAMMPS_2026:-}" ]; then
  build_against "$DISTSPEC_LAMMPS_2026" 20260704 -DDISTSPEC_ENABLE_CUDA=OFF -DDISTSPEC_BUILD_BENCH=OFF "$@"
fi
