#!/usr/bin/env bash
# The message-passing model with `halo per_layer` (one-cutoff ghost shell, one feature exchange
# per layer boundary) against `halo expanded` (ghost shell of L cutoffs, every layer computed on
# ghosts too, no feature exchange) for L = 1..6 on 1, 2 and 4 MPI ranks: time per step, halo
# rows, feature bytes per step and peak memory per rank. Each configuration is its own LAMMPS
# process under /usr/bin/time, whose maximum resident set size is the peak memory of each rank;
# per_layer and expanded alternate for each (L, ranks).
#
#   bench/halo_layers/run.sh
#
# Environment: DISTSPEC_BUILD, DISTSPEC_LMP (bench/common.sh); BENCH_LAYERS ("1 2 3 4 5 6"),
# BENCH_RANKS ("1 2 4"), BENCH_CELLS (10: 4 n^3 = 4 000 atoms), BENCH_STEPS (2), BENCH_REPEATS (1),
# BENCH_OUT (logs and the generated models; build/bench/halo_layers),
# BENCH_PLOT (bench/halo_layers/halo_layers.png).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"

layers=${BENCH_LAYERS:-1 2 3 4 5 6}
ranks=${BENCH_RANKS:-1 2 4}
cells=${BENCH_CELLS:-10}
steps=${BENCH_STEPS:-2}
repeats=${BENCH_REPEATS:-1}
out=${BENCH_OUT:-$repo/build/bench/halo_layers}
plot=${BENCH_PLOT:-$here/halo_layers.png}
mkdir -p "$out/models"
rm -f "$out"/log.* "$out"/rss.*
machine_line > "$out/machine.txt"

# The L-layer models (generated, not trained: scripts/generate_mpnn_model.py).
# shellcheck disable=SC2086
python3 "$repo/scripts/generate_mpnn_model.py" --out "$out/models" --layers $layers >&2

for rep in $(seq 1 "$repeats"); do
  for L in $layers; do
    for np in $ranks; do
      for halo in per_layer expanded; do
        tag="$L.$np.$halo.$rep"
        echo "bench: L = $L, $np rank(s), halo $halo, $steps steps (repeat $rep)" >&2
        # In the output folder, the model named relative to it: logs name no path of this machine.
        (cd "$out" && mpirun --oversubscribe -np "$np" /usr/bin/time -f "BENCH maxrss_kb %M" \
          "$DISTSPEC_LMP" -in "$here/in.halo" -log "log.$tag" -screen none -var plugin "$PLUGIN_NAME" \
          -var model "models/cu_mpnn_L$L.json" -var halo "$halo" -var n "$cells" -var steps "$steps" \
          2> "rss.$tag") || { cat "$out/rss.$tag" >&2; exit 1; }
      done
    done
  done
done
python3 "$here/report.py" "$out" "$plot"
