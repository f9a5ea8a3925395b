#!/usr/bin/env bash
# Weak and strong scaling of `pair_style distspec device cuda` over the GPUs of one node, one MPI
# rank per GPU, halo rows staged through the host (LAMMPS' comm is not CUDA-aware here).
#   bench/gpu_scaling/run.sh [GPU_COUNTS] [MODELS]      e.g. "1 2" "eam mpnn2 mpnn4"
# Weak: 32 000 and 256 000 atoms per GPU; strong: 256 000 atoms in all. Prints a table, also
# written to $OUT_DIR/scaling.txt (default bench/gpu_scaling/out); plot.sh draws it.
# Runs where LAMMPS and the plugin are: on a GPU machine without them, pass the folder that
# scripts/pack_gpu_run.sh made as DISTSPEC_GPU_RUN.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ -n "${DISTSPEC_GPU_RUN:-}" ]; then
  # shellcheck source=/dev/null
  source "$DISTSPEC_GPU_RUN/env.sh"
  lmp=lmp
  plugin=$(basename "$DISTSPEC_PLUGIN")  # on LD_LIBRARY_PATH (env.sh): logs name no path
else
  # shellcheck source=/dev/null
  source "$repo/bench/common.sh"
  lmp=$DISTSPEC_LMP
  plugin=$PLUGIN_NAME
fi
gpus=${1:-"1 2"}
models=${2:-"eam mpnn2 mpnn4"}
steps=${DISTSPEC_SCALING_STEPS:-50}
cells=${DISTSPEC_SCALING_CELLS:-"20 40"}      # fcc cells per GPU along each edge: 32 000 and 256 000 atoms
strong_cells=${DISTSPEC_SCALING_STRONG:-40}   # 256 000 atoms in all
device=${DISTSPEC_SCALING_DEVICE:-cuda}       # cpu: try the script where no GPU is
out=${OUT_DIR:-$here/out}
mkdir -p "$out"
# Relative to the repository, where LAMMPS runs: logs name no path of this machine.
model_file() {
  case $1 in
    eam) echo "potentials/cu_eam_u3.json" ;;
    mpnn2) echo "potentials/cu_mpnn_L2.json" ;;
    mpnn4) echo "potentials/cu_mpnn_L4.json" ;;
  esac
}

# One run: prints "ms_per_step exchange_ms_per_step atoms".
measure() {
  local model=$1 n=$2 nx=$3 ny=$4 nz=$5 log=$out/$1.np$2.$3x$4x$5.log
  # A run that stops on one rank must not hold the others (and the GPU machine) forever.
  (cd "$repo" && timeout "${DISTSPEC_SCALING_TIMEOUT:-240}" mpirun --oversubscribe -np "$n" "$lmp" -in "$here/in.scaling" -log "$log" -screen none -var plugin "$plugin" \
    -var model "$(model_file "$model")" -var nx "$nx" -var ny "$ny" -var nz "$nz" -var steps "$steps" -var device "$device" >/dev/null 2>&1) ||
    { echo "FAIL $log" >&2; grep ERROR "$log" >&2 || true; echo "nan nan 0"; return; }
  # The last run's loop time and the last DISTSPEC breakdown's exchange row (avg column).
  awk '/^Loop time of/ {t = $4; s = $9; a = $12}
       /^DISTSPEC timing breakdown/ {ex = 0}
       tolower($1) ~ /^exchange/ {split($0, f, "|"); ex = f[3] + 0}
       END {printf "%.3f %.3f %d\n", 1000 * t / s, 1000 * ex / s, a}' "$log"
}

table=$out/scaling.txt
{
  echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s); $steps timed steps, NVE 300 K, forces every step"
  printf "%-6s %-6s %5s %9s %12s %10s %12s %10s\n" model mode gpus atoms atoms/gpu ms/step exchange_ms efficiency
} | tee "$table"
for model in $models; do
  for per_gpu in $cells; do
    base=""
    for n in $gpus; do
      read -r ms ex atoms < <(measure "$model" "$n" $((per_gpu * n)) "$per_gpu" "$per_gpu")
      [ -z "$base" ] && base=$ms
      eff=$(awk -v b="$base" -v m="$ms" 'BEGIN {printf "%.1f%%", 100 * b / m}')
      printf "%-6s %-6s %5d %9d %12d %10s %12s %10s\n" "$model" weak "$n" "$atoms" $((atoms / n)) "$ms" "$ex" "$eff" | tee -a "$table"
    done
  done
  base=""
  for n in $gpus; do
    read -r ms ex atoms < <(measure "$model" "$n" "$strong_cells" "$strong_cells" "$strong_cells")
    [ -z "$base" ] && base=$ms
    eff=$(awk -v b="$base" -v m="$ms" -v n="$n" 'BEGIN {printf "%.1f%%", 100 * b / (m * n)}')
    printf "%-6s %-6s %5d %9d %12d %10s %12s %10s\n" "$model" strong "$n" "$atoms" $((atoms / n)) "$ms" "$ex" "$eff" | tee -a "$table"
  done
done

echo "table: $table (plot it with bench/gpu_scaling/plot.sh $table)"
