#!/usr/bin/env bash
# Builds the core and its unit tests with ASan + UBSan in build-asan/ (no LAMMPS needed) and
# runs them under ctest. Any sanitizer report fails the run.
#
#   scripts/sanitize.sh
#
# Environment: DISTSPEC_JOBS (build jobs, default 2), CXX (compiler, default the system's).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build-asan
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

cmake -S "$repo/unittest/core" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Debug -DDISTSPEC_SANITIZE=ON >/dev/null
cmake --build "$build" -j "${DISTSPEC_JOBS:-2}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest -L core --output-on-failure -j "${DISTSPEC_JOBS:-2}"
