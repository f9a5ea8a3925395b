#!/usr/bin/env bash
# Sets everything up (Debian packages, LAMMPS 2021 + 2025 from Debian sources, the plugin) and
# runs the whole suite: the sanitizer build of the core, a fuzz smoke run of the spec parser,
# then ctest (unit tests, and integration tests on 1, 2 and 4 MPI ranks) against each LAMMPS.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
start=$(date +%s)
stage() { printf '\n=== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }

stage "bootstrap"
./scripts/bootstrap.sh
stage "build"
mapfile -t builds < <(./scripts/build.sh | tee /dev/stderr | sed -n 's/^BUILD //p')

stage "core under AddressSanitizer + UndefinedBehaviorSanitizer"
./scripts/sanitize.sh
stage "fuzz smoke run of the spec parser"
./scripts/fuzz.sh "${DISTSPEC_FUZZ_SECONDS:-60}"

status=0
for dir in "${builds[@]}"; do
  stage "ctest: $(basename "$dir")"
  ctest --test-dir "$dir" --output-on-failure --timeout 1200 || status=1
done
stage "done"
exit $status
