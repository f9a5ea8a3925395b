#!/usr/bin/env bash
# Fuzzes the spec reader (fuzz_spec_parser) and the model-file reader (fuzz_model_file) with
# libFuzzer (ASan + UBSan) for SECONDS each (default 60). Builds only the core and the models
# library, in build-fuzz/ (clang needed, no LAMMPS).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]        TARGET: spec, model (default both)
#
# Prints the number of executions per target; exits non-zero on a finding, whose input is kept
# in build-fuzz/artifacts/. Seeds: the golden specs (DISTSPEC_SHARED_SPECS_DIR, default
# unittest/golden_specs, else ../shared/specs beside the repository) and unittest/fuzz/seeds for
# the spec reader; potentials/*.json under 64 KB and unittest/fuzz/model_seeds for the model-file
# reader.
# Environment: DISTSPEC_JOBS (build jobs, default 2).
set -euo pipefail

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec model)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
specs=${DISTSPEC_SHARED_SPECS_DIR:-$repo/unittest/golden_specs}
[ -d "$specs" ] || specs=$repo/../shared/specs
build=$repo/build-fuzz
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

CC=clang CXX=clang++ cmake -S "$repo/unittest/fuzz" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISTSPEC_FUZZ=ON >/dev/null

# fuzz TARGET CORPUS DICT SEED_FILE...: one libFuzzer run; the corpus (a folder in build-fuzz/)
# persists between runs, the seeds are refreshed each time.
fuzz() {
  local target=$1 corpus=$build/$2 dict=$3
  shift 3
  # (set -e does not apply inside a function called with ||: check the build explicitly)
  cmake --build "$build" -j "${DISTSPEC_JOBS:-2}" --target "$target" >"$build/$target.build.log" 2>&1 \
    || { tail -n 20 "$build/$target.build.log" >&2; echo "$target: build failed" >&2; return 2; }
  local log=$build/$target.log
  mkdir -p "$corpus" "$build/artifacts"
  cp "$@" "$corpus/"
  local status=0
  "$build/$target" -max_total_time="$seconds" -print_final_stats=1 -dict="$dict" \
    -artifact_prefix="$build/artifacts/$target-" "$corpus" >"$log" 2>&1 || status=$?
  local executions
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  echo "$target: ${executions:-0} executions in ${seconds} s (log: $log)"
  if [ $status -ne 0 ]; then
    grep -E "ERROR|finding|runtime error|Test unit written" "$log" | head -n 20 >&2 || true
    echo "$target: finding (exit $status)" >&2
  fi
  return $status
}

status=0
for t in "${targets[@]}"; do
  case $t in
    spec) fuzz fuzz_spec_parser corpus "$repo/unittest/fuzz/spec.dict" "$specs"/*.json "$repo"/unittest/fuzz/seeds/*.json \
            || status=1 ;;
    # The network potentials (0.3-0.5 MB each) would slow every execution ~100x: a 2-feature
    # network in model_seeds stands in for them.
    model) mapfile -t seeds < <(find "$repo/potentials" -maxdepth 1 -name '*.json' -size -64k)
           fuzz fuzz_model_file corpus-model "$repo/unittest/fuzz/model.dict" "${seeds[@]}" \
             "$repo"/unittest/fuzz/model_seeds/*.json || status=1 ;;
    *) echo "fuzz.sh: unknown target '$t'; expected spec or model" >&2; exit 2 ;;
  esac
done
exit $status
