#!/usr/bin/env bash
# Sets everything up (Debian packages, LAMMPS 2021, 2025 and 2026 from Debian sources, the plugin) and
# runs the whole suite: the sanitizer build of the core, fuzz smoke runs of the spec and
# model-file readers (30 s each), then ctest: every test (unit tests, integration tests on 1, 2
# and 4 MPI ranks, the fault matrix on 1 to 8, the torch backend) against LAMMPS 29 Sep 2021, the
# build with KOKKOS and the most variants, and the version smoke set (ctest label smoke: the
# integration suite, the fault matrix and the exported toy models through LAMMPS, on 2 ranks)
# against LAMMPS 4 Feb 2025 and 4 Jul 2026.
#
# Environment: DISTSPEC_FULL_SUITE=all runs every test against every LAMMPS (about twice as
# long); DISTSPEC_FUZZ_SECONDS (30); DISTSPEC_SANITIZE_INTEGRATION=0 skips the sanitized
# integration tests. Compiles go through ccache (cache in $DISTSPEC_CACHE/ccache), so a warm
# machine rebuilds the plugin and tests of a fresh clone in a minute or two.
#
# ctest counts a skipped test as passed: after each ctest stage, and in total at the end,
# scripts/test_summary.py prints the tests run, the comparisons made, and each skipped test with
# its reason, and fails the run on a skip whose reason unittest/allowed_skips.txt does not allow
# on this kind of machine (DISTSPEC_MACHINE_KIND: cpu or gpu, detected by default).
#
# ctest runs DISTSPEC_TEST_JOBS tests at once (default: the machine's cores). An MPI test asks
# for as many slots as it has ranks (its PROCESSORS property), so a 4-rank test runs alone on 2
# cores while single-process tests (the Python, unit and 1-rank tests) share them; every test
# writes only to files named by its own process (test_cases.cpp), so concurrent tests never
# share a file.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
start=$(date +%s)
stage() { printf '\n=== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }
# The stages' numbers, for the total at the end.
summaries=$(mktemp)
trap 'rm -f "$summaries"' EXIT
# summarise STAGE JUNIT: the stage's skips and counts; fails on a skip the allow-list lacks.
summarise() { ./scripts/test_summary.py "$1" "$2" --record "$summaries"; }

stage "bootstrap"
./scripts/bootstrap.sh
# shellcheck source=scripts/ccache_env.sh
source ./scripts/ccache_env.sh
stage "build"
# The build's output goes to stderr as well: through a process, since tee /dev/stderr would reopen
# (and truncate) a log file that stderr is redirected to.
mapfile -t builds < <(./scripts/build.sh | tee >(cat >&2) | sed -n 's/^BUILD //p')

stage "core under AddressSanitizer + UndefinedBehaviorSanitizer"
./scripts/sanitize.sh
stage "fuzz smoke runs of the spec and model-file readers"
./scripts/fuzz.sh "${DISTSPEC_FUZZ_SECONDS:-30}" spec model

status=0
jobs=${DISTSPEC_TEST_JOBS:-$(nproc)}
# The plugin and integration tests under ASan + UBSan (LAMMPS 2025): about 10 minutes to build
# cold and 6 to run on 2 cores (the integration suite on 2 ranks, the fault matrix on 1, 2, 4). DISTSPEC_SANITIZE_INTEGRATION=0 skips it.
# shellcheck source=/dev/null
source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
if [ "${DISTSPEC_SANITIZE_INTEGRATION:-1}" != 0 ] && [ -n "${DISTSPEC_LAMMPS_2025:-}" ]; then
  stage "plugin and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  ./scripts/sanitize.sh integration || status=1
  summarise "sanitized integration tests (LAMMPS 2025)" build-asan-lammps/Testing/junit.xml || status=1
fi
# The first build (LAMMPS 2021) runs every test; the others the version smoke set, unless
# DISTSPEC_FULL_SUITE=all (the nvalchemi interop tests run Python and the spec tool, not LAMMPS:
# once, in the first build, either way).
first=1
for dir in "${builds[@]}"; do
  select=()
  if [ $first = 0 ]; then
    if [ "${DISTSPEC_FULL_SUITE:-}" = all ]; then select=(-LE interop); else select=(-L smoke); fi
  fi
  stage "ctest: $(basename "$dir")${select[*]:+ (${select[*]})}"
  first=0
  # The JUnit report keeps each test's whole output, whose DISTSPEC-SKIP lines test_summary.py reads.
  ctest --test-dir "$dir" --output-on-failure --timeout 1200 -j "$jobs" "${select[@]}" --output-junit "$dir/Testing/junit.xml" \
    --test-output-size-passed 100000000 --test-output-size-failed 100000000 || status=1
  summarise "ctest: $(basename "$dir")" "$dir/Testing/junit.xml" || status=1
  # The nvalchemi interop tests' own summaries (specs checked, passed, failed).
  grep -h '^nvalchemi interop' "$dir/Testing/Temporary/LastTest.log" 2>/dev/null || true
done
stage "done"
./scripts/test_summary.py --total "$summaries" || status=1
exit $status
