#!/usr/bin/env bash
# Runs tests built with AddressSanitizer + UndefinedBehaviorSanitizer. Any sanitizer report
# fails the run.
#
#   scripts/sanitize.sh [core|integration]
#
# core (the default): the core and its unit tests, and the message-passing model's tape ops
#   (TapeOps.* of the model tests), in build-asan/ (no LAMMPS needed).
# integration: the models, the plugin and the integration tests against LAMMPS 4 Feb 2025, in
#   build-asan-lammps/, run on 2 MPI ranks (the integration suite, with every case's error rows:
#   two ranks run the exchanges between ranks and, along the undivided axes, the periodic
#   self-images one rank runs; 1 rank unsanitized in the LAMMPS 2021 suite) and on 1, 2 and 4
#   (the fault matrix). LAMMPS and Open MPI themselves
#   are not instrumented; the leaks they keep until exit are suppressed by
#   scripts/lsan_suppressions.txt, which names those libraries only.
#
# Environment: DISTSPEC_JOBS (build jobs, default 2), CXX (compiler, default the system's),
# DISTSPEC_LAMMPS_2025 (integration; default from ~/.cache/distspec/env.sh).
set -euo pipefail

mode=${1:-core}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

case $mode in
core)
  build=$repo/build-asan
  cmake -S "$repo/unittest/core" -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Debug -DDISTSPEC_SANITIZE=ON >/dev/null
  cmake --build "$build" -j "${DISTSPEC_JOBS:-2}"
  cd "$build"
  ctest -L core --output-on-failure -j "${DISTSPEC_JOBS:-2}"
  # The message-passing model's tape ops, tested beside the model.
  ctest -L models -R '^TapeOps\.' --output-on-failure -j "${DISTSPEC_JOBS:-2}"
  ;;
integration)
  # shellcheck source=/dev/null
  [ -n "${DISTSPEC_LAMMPS_2025:-}" ] || source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
  build=$repo/build-asan-lammps
  # -O1: sanitized Debug code runs the MPNN too slowly for the suite's timeouts.
  cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DDISTSPEC_SANITIZE=ON -DDISTSPEC_ENABLE_CUDA=OFF -DDISTSPEC_BUILD_BENCH=OFF \
    -DLAMMPS_SOURCE_DIR="$DISTSPEC_LAMMPS_2025/source" -DLAMMPS_BUILD_DIR="$DISTSPEC_LAMMPS_2025/build" \
    -DDISTSPEC_TEST_RANKS="2" -DDISTSPEC_FAULT_MATRIX_RANKS="1;2;4" >/dev/null
  cmake --build "$build" -j "${DISTSPEC_JOBS:-2}" --target distspec_plugin distspec_integration_tests distspec_fault_matrix \
    distspec_replica_tests
  # Leaks of LAMMPS and Open MPI (kept until exit by design) are suppressed by library name,
  # ours are not; for the names to be known, no library may be unloaded before the report
  # (asan_keep_modules.c). It is preloaded into mpirun too (harmless there), which is why the
  # ASan runtime need not come first in the library list.
  cc -shared -fPIC -O2 -o "$build/asan_keep_modules.so" "$repo/scripts/asan_keep_modules.c"
  export LD_PRELOAD=$build/asan_keep_modules.so
  # fast_unwind_on_malloc=0: Open MPI's asprintf() allocations need the slow unwinder to show
  # which library made them (the fast one stops in libc, which has no frame pointers).
  export ASAN_OPTIONS="$ASAN_OPTIONS:detect_odr_violation=0:verify_asan_link_order=0:fast_unwind_on_malloc=0"
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$repo/scripts/lsan_suppressions.txt:print_suppressions=0}
  # 10 000 network steps (the case nve_mpnn_cu_L2) take most of an hour under ASan on 2 cores;
  # the code they run is the code the other cases run for a few steps.
  export GTEST_FILTER=${GTEST_FILTER:--*/nve_mpnn_*}
  cd "$build"
  # The whole output in a JUnit report: scripts/test_summary.py reads the skips from it.
  ctest -L integration --output-on-failure --timeout 1800 -j "${DISTSPEC_TEST_JOBS:-$(nproc)}" --output-junit "$build/Testing/junit.xml" \
    --test-output-size-passed 100000000 --test-output-size-failed 100000000
  ;;
*)
  echo "sanitize.sh: unknown mode '$mode'; expected core or integration" >&2
  exit 2
  ;;
esac
