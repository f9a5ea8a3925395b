#!/usr/bin/env bash
# One GPU-machine call that proves and measures exported torch models under distspec/kk, for a
# machine that starts bare: the KOKKOS-for-CUDA LAMMPS and the plugin with that machine's torch
# (scripts/gpu_build_kokkos.sh, DISTSPEC_GPU_TORCH=ON, the plugin alone) while the fixtures are
# exported beside it (scripts/gpu_torch_fixtures.sh), then the check against the CPU
# (scripts/gpu_check_torch_kk.sh) and, with --bench, bench/torch_kk_gpu. About 8 minutes on 16
# cores without --bench (the build alone took 433 s on one H100 machine). Logs and results under
# OUT_DIR. The fixtures are the toy MPNN and SevenNet's serial module unless DISTSPEC_GPU_FIXTURES
# says otherwise: SevenNet-0's AOTInductor packages take 5 minutes or more each, so they get a
# call of their own on the still-warm machine (build-gpu-kokkos stays there between calls):
#   DISTSPEC_GPU_FIXTURES=aoti PYTHONPATH=build-gpu-src/site DISTSPEC_SPECS=build-gpu-src/specs \
#     scripts/gpu_torch_fixtures.sh build-gpu-kokkos/fixtures
# With --tests it builds the torch LAMMPS tests too and runs their kk_gpu cases on 1 and 2 ranks
# (DISTSPEC_GPU_TEST_FILTER narrows them), the TorchScript ones (MACE, NequIP, Allegro, AIMNet2)
# on the fixtures the bundle carries (pack_gpu_source.sh --torch-fixtures).
#   here:  scripts/pack_gpu_source.sh --kokkos --sevenn [--torch-fixtures ~/.cache/distspec/torch-fixtures] build-gpu-src
#   there: scripts/gpu_torch_kk_session.sh build-gpu-src OUT_DIR [--bench] [--tests]   (carry build-gpu-src)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath "${1:?usage: gpu_torch_kk_session.sh BUNDLE OUT_DIR [--bench]}")
out=$(realpath -m "${2:?OUT_DIR}")
mkdir -p "$out"
shift 2
bench=0 tests=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --tests) tests=1 ;;
    *) echo "gpu_torch_kk_session: unknown option $arg (--bench, --tests)" >&2; exit 2 ;;
  esac
done
build=$root/build-gpu-kokkos
export DISTSPEC_CACHE=${DISTSPEC_CACHE:-$build/cache} DISTSPEC_GPU_TORCH=ON DISTSPEC_GPU_PLUGIN_ONLY=$((1 - tests))
export DISTSPEC_GPU_FIXTURES=${DISTSPEC_GPU_FIXTURES:-toy serial}
export PYTHONPATH="$bundle/site${PYTHONPATH:+:$PYTHONPATH}" DISTSPEC_SPECS=${DISTSPEC_SPECS:-$bundle/specs}
start=$(date +%s)
say() { echo "gpu_torch_kk_session: $* ($(( $(date +%s) - start )) s)" | tee -a "$out/session.log" >&2; }
mkdir -p "$build"
("$root/scripts/gpu_torch_fixtures.sh" "$build/fixtures" > "$out/fixtures.log" 2>&1; echo "rc=$?" >> "$out/fixtures.log") &
fixtures=$!
"$root/scripts/gpu_build_kokkos.sh" "$bundle" "$build" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; say "build failed"; exit 1; }
say "built"
wait "$fixtures"
grep "gpu_torch_fixtures" "$out/fixtures.log" | tee -a "$out/session.log" >&2
# shellcheck source=/dev/null
source "$bundle/env.sh"
# shellcheck source=/dev/null
source "$build/env.sh"
lmp=$(sed -n 's/^LMP //p' "$out/build.log")
plugin=$(sed -n 's/^PLUGIN //p' "$out/build.log")
"$root/scripts/gpu_check_torch_kk.sh" "$lmp" "$plugin" "$build/fixtures" "$out/check" | tee "$out/check.txt"
status=${PIPESTATUS[0]}
say "checked (status $status)"
# The bundle's TorchScript fixtures beside those exported here (which they never replace).
for f in "$bundle"/fixtures/*; do
  [ -f "$f" ] && [ ! -e "$build/fixtures/${f##*/}" ] && cp "$f" "$build/fixtures/"
done
if [ $tests = 1 ]; then
  torch_tests=$(sed -n 's/^TORCH_TESTS //p' "$out/build.log")
  filter=${DISTSPEC_GPU_TEST_FILTER:-Data/Cases.*/*kk_gpu*}
  for np in 1 2; do
    DISTSPEC_TORCH_FIXTURES=$build/fixtures OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      mpirun --oversubscribe -np $np "$torch_tests" --gtest_filter="$filter" \
      --gtest_output="xml:$out/tests_np$np.xml" > "$out/tests_np$np.txt" 2>&1
    rc=$?
    grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]" "$out/tests_np$np.txt" | sort -u | tail -40 | tee -a "$out/session.log" >&2
    [ $rc = 0 ] || status=1
    say "torch kk_gpu tests on $np rank(s): rc $rc"
  done
fi
if [ $bench = 1 ]; then
  OUT_DIR=$out/bench "$root/bench/torch_kk_gpu/run.sh" "$lmp" "$plugin" "$build/fixtures" > "$out/bench.txt" 2>&1
  cat "$out/bench.txt"
  say "benchmarked"
fi
exit "$status"
