#!/usr/bin/env bash
# Draws a kk_compare.txt table (bench/gpu_kokkos/run.sh) as PNG: reference ms per step / distspec
# ms per step against atoms, one line per model (LJ and EAM against lj/cut/kk and eam/kk; MPNN
# against the plain style with `device cuda`), with the 0.8 target of LJ and EAM.
#   bench/gpu_kokkos/plot.sh [TABLE] [PNG]      default h200/kk_compare.txt, h200/kk_compare.png
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table=${1:-$here/h200/kk_compare.txt}
png=${2:-${table%.txt}.png}
data=$(mktemp)
trap 'rm -f "$data"' EXIT
awk '!/^#/ && $1 != "model" {print $1, $2, $7}' "$table" | sort -k1,1 -k2,2n > "$data"
plots=""
for m in $(cut -d' ' -f1 "$data" | sort -u); do
  plots="$plots${plots:+, }'< grep \"^$m \" $data' using 2:3 with linespoints lw 2 title '$m'"
done
gnuplot <<GP
set terminal pngcairo size 800,500
set output '$png'
set logscale x
set xlabel 'atoms'
set ylabel 'speed relative to the reference (reference ms / distspec ms)'
set title 'distspec/kk on one H200'
set key bottom right
set yrange [0:*]
set grid
plot $plots, 0.8 with lines dt 2 lc rgb 'gray' title 'LJ/EAM target 0.8'
GP
echo "$png"
