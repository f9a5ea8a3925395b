#!/usr/bin/env bash
# What computing node updates on owned rows only saves (doc/torch_models.md, "Node work on the
# owned rows"): SevenNet-0 through `pair_style distspec device cuda`, exported twice from the same
# commit, once as the exporter does it and once with every node update on every row
# (DISTSPEC_EXPORT_EVERY_ROW=1), each measured by bench/accelerators/run.sh (forces against
# SevenNet's calculator and 2 ranks against 1, then seconds per step and peak GPU memory). Prints
# both tables, owned rows first.
#
#   bench/owned_rows/run.sh
#
# Environment: as bench/accelerators/run.sh (DISTSPEC_LMP, DISTSPEC_PLUGIN, DISTSPEC_PYTHON,
# DISTSPEC_OPENEQUIVARIANCE_LIBRARY); BENCH_ACCELERATORS ("oeq"), BENCH_CELLS_oeq ("11 17"),
# BENCH_OUT (build/bench/owned_rows: owned/ and every_row/ below it), BENCH_MODEL (sevennet).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(realpath -m "${BENCH_OUT:-$repo/build/bench/owned_rows}")
export BENCH_ACCELERATORS=${BENCH_ACCELERATORS:-oeq} BENCH_CELLS_oeq=${BENCH_CELLS_oeq:-11 17}
BENCH_OUT="$out/owned" DISTSPEC_EXPORT_EVERY_ROW=0 "$repo/bench/accelerators/run.sh"
BENCH_OUT="$out/every_row" DISTSPEC_EXPORT_EVERY_ROW=1 "$repo/bench/accelerators/run.sh"
for which in owned every_row; do
  echo "== $which ($out/$which/table.md)"
  cat "$out/$which/table.md"
done
