#!/usr/bin/env bash
# Draws the table of run.sh: weak-scaling efficiency and ms/step against GPUs, one line per model
# and size.   bench/gpu_scaling/plot.sh TABLE [PNG]
set -euo pipefail
table=$1
png=${2:-$(dirname "$table")/gpu_scaling.png}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
awk -v d="$data" '!/^#/ && $2 == "weak" && $6 != "nan" {f = d "/" $1 "_" $5 ".dat"; print $3, $8 + 0, $6 > f}' "$table"
plots=""
for f in "$data"/*.dat; do
  name=$(basename "$f" .dat)
  plots+="${plots:+, }'$f' using 1:2 with linespoints lw 2 title '${name/_/, } atoms per GPU'"
done
gnuplot <<GP
set terminal pngcairo size 800,500 font ",11" noenhanced
set output "$png"
set title "pair_style distspec device cuda: weak scaling on H200 GPUs"
set xlabel "GPUs (one MPI rank each)"
set ylabel "efficiency against 1 GPU (%)"
set yrange [0:110]
set xtics 1
set key bottom left
set grid
plot $plots
GP
echo "plot: $png"
