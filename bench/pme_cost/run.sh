#!/usr/bin/env bash
# The PME model against the Ewald model at the same accuracy (1e-5 relative, 10 A real-space
# cutoff, potentials/nacl_pme.json and nacl_ewald_accuracy.json) on rock salt from 1 000 to
# 1 000 000 ions: seconds per step of each, one LAMMPS run per (model, size), on BENCH_RANKS
# ranks. Ewald's k-space costs O(N K) with K growing as the box (O(N^1.5) at fixed accuracy),
# PME's O(N p^3 + M log M); a run that exceeds BENCH_TIMEOUT seconds is reported as not finished.
# Then report.py: the table (table.md) and the plot (pme_cost.png).
#   bench/pme_cost/run.sh
# Environment: DISTSPEC_BUILD, DISTSPEC_LMP (bench/common.sh); BENCH_CELLS ("5 10 20 32 50":
# 8 n^3 ions), BENCH_RANKS (1), BENCH_STEPS (3), BENCH_TIMEOUT (600), BENCH_OUT
# (build/bench/pme_cost).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"
out=${BENCH_OUT:-$repo/build/bench/pme_cost}
mkdir -p "$out"
ranks=${BENCH_RANKS:-1}
machine_line > "$out/machine.txt"
for n in ${BENCH_CELLS:-5 10 20 32 50}; do
  for model in pme ewald; do
    file=$repo/potentials/nacl_pme.json
    [ "$model" = ewald ] && file=$repo/potentials/nacl_ewald_accuracy.json
    log="$out/log.$model.$n"
    if [ -f "$out/skip.$model" ]; then echo "bench: $model n=$n skipped (a smaller size did not finish)" >&2; continue; fi
    echo "bench: $model n=$n ($((8 * n * n * n)) ions)" >&2
    timeout "${BENCH_TIMEOUT:-600}" mpirun --oversubscribe -np "$ranks" "$DISTSPEC_LMP" -in "$here/in.pme_cost" \
      -log "$log" -screen none -var plugin "$PLUGIN_NAME" -var model "$file" -var n "$n" \
      -var steps "${BENCH_STEPS:-3}" > /dev/null 2>&1 || { echo "bench: $model n=$n did not finish" >&2; touch "$out/skip.$model"; }
  done
done
rm -f "$out"/skip.*
python3 "$here/report.py" "$out" "$here/pme_cost.png" | tee "$out/table.md"
