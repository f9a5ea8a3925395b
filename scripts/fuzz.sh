#!/usr/bin/env bash
# Fuzzes the spec reader with libFuzzer (ASan + UBSan) for SECONDS (default 60), seeded with
# the golden specs. Builds only the core, in build-fuzz/ (clang needed, no LAMMPS).
#
#   scripts/fuzz.sh [SECONDS]
#
# Prints the number of executions; exits non-zero on a finding, whose input is kept in
# build-fuzz/artifacts/. Environment: DISTSPEC_SHARED_SPECS_DIR (golden specs, default
# unittest/golden_specs, else ../shared/specs beside the repository), DISTSPEC_JOBS (build
# jobs, default 2).
set -euo pipefail

seconds=${1:-60}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
specs=${DISTSPEC_SHARED_SPECS_DIR:-$repo/unittest/golden_specs}
[ -d "$specs" ] || specs=$repo/../shared/specs
build=$repo/build-fuzz
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

CC=clang CXX=clang++ cmake -S "$repo/unittest/fuzz" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISTSPEC_FUZZ=ON >/dev/null
cmake --build "$build" -j "${DISTSPEC_JOBS:-2}" --target fuzz_spec_parser >/dev/null

# The corpus persists between runs; the seeds are refreshed each time.
mkdir -p "$build/corpus" "$build/artifacts"
cp "$specs"/*.json "$repo"/unittest/fuzz/seeds/*.json "$build/corpus/"

set +e
"$build/fuzz_spec_parser" -max_total_time="$seconds" -print_final_stats=1 \
  -dict="$repo/unittest/fuzz/spec.dict" -artifact_prefix="$build/artifacts/" \
  "$build/corpus" >"$build/fuzz.log" 2>&1
status=$?
set -e

executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz.log" | tail -n 1)
echo "fuzz_spec_parser: ${executions:-0} executions in ${seconds} s (log: $build/fuzz.log)"
if [ $status -ne 0 ]; then
  grep -E "ERROR|finding|runtime error|Test unit written" "$build/fuzz.log" | head -n 20 >&2 || true
  echo "fuzz_spec_parser: finding (exit $status)" >&2
fi
exit $status
