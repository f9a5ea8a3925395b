#!/usr/bin/env bash
# distspec/kk against LAMMPS' own KOKKOS styles on one GPU, both in the same job, in turn:
# lj/cut/kk and eam/kk beside distspec/kk with the same model (potentials/lj_argon.json,
# cu_eam_u3.json), 256 000, 1 000 188 and 4 000 000 atoms; then the message-passing model
# (2 and 4 layers) with distspec/kk beside the plain style with `device cuda`, whose atoms stay
# on the host. Prints a table (ms per step, distspec / native), also written to
# $OUT_DIR/kk_compare.txt, and keeps every log there (`timing yes` breakdowns included).
#   bench/gpu_kokkos/run.sh LMP PLUGIN      (scripts/gpu_build_kokkos.sh prints both)
# Environment: DISTSPEC_KK_CELLS (default "40 63 100"), DISTSPEC_KK_STEPS (200),
#              DISTSPEC_KK_MPNN_CELLS (default "40 63"), DISTSPEC_KK_MPNN_STEPS (20), OUT_DIR;
#              an empty cell list skips those rows.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lmp=$(realpath "${1:?usage: run.sh LMP PLUGIN}")
plugin=$(realpath "${2:?usage: run.sh LMP PLUGIN}")
cells=${DISTSPEC_KK_CELLS-"40 63 100"}
steps=${DISTSPEC_KK_STEPS:-200}
mpnn_cells=${DISTSPEC_KK_MPNN_CELLS-"40 63"}
mpnn_steps=${DISTSPEC_KK_MPNN_STEPS:-20}
out=$(realpath -m "${OUT_DIR:-$here/out}")
mkdir -p "$out"
# The plugin by file name on the loader path: LAMMPS' logs name no path of this machine.
plugin_dir=$(dirname "$plugin")
export LD_LIBRARY_PATH="$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
kk=(-k on g 1 -sf kk -pk kokkos newton on neigh half)

# measure LOG ARGS...: one run; prints "ms_per_step atoms" of its timed (last) run.
measure() {
  local log=$1; shift
  (cd "$repo" && timeout "${DISTSPEC_KK_TIMEOUT:-300}" "$lmp" "$@" -in "$here/in.kk_compare" -log "$log" -screen none \
      -var plugin "$(basename "$plugin")" > /dev/null 2>&1) || { echo "FAIL $log" >&2; grep ERROR "$log" >&2 || true; echo "nan 0"; return; }
  awk '/^Loop time of/ {t = $4; s = $9; a = $12} END {printf "%.3f %d\n", 1000 * t / s, a}' "$log"
}

table=$out/kk_compare.txt
{
  echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $steps timed NVE steps (MPNN: $mpnn_steps) after 20 warm-up steps"
  printf "%-5s %9s %-22s %10s %-24s %10s %8s\n" model atoms reference ref_ms distspec distspec_ms ratio
} | tee "$table"
row() { awk -v m="$1" -v a="$2" -v r="$3" -v rt="$4" -v d="$5" -v dt="$6" \
  'BEGIN {printf "%-5s %9d %-22s %10.3f %-24s %10.3f %8.3f\n", m, a, r, rt, d, dt, (dt > 0 ? rt / dt : 0)}' | tee -a "$table"; }

for n in $cells; do
  lj=(-var lattice 5.26 -var mass 39.948 -var temp 100 -var n "$n" -var steps "$steps")
  read -r t_native atoms < <(measure "$out/lj.native.$n.log" "${kk[@]}" "${lj[@]}" -var pair "lj/cut 8.5" -var coeff "1 1 0.0104 3.4")
  read -r t_distspec _ < <(measure "$out/lj.distspec.$n.log" "${kk[@]}" "${lj[@]}" -var pair "distspec timing yes" \
      -var coeff "* * potentials/lj_argon.json Ar")
  row lj "$atoms" lj/cut/kk "$t_native" distspec/kk "$t_distspec"
  eam=(-var lattice 3.615 -var mass 63.546 -var temp 600 -var n "$n" -var steps "$steps")
  read -r t_native atoms < <(measure "$out/eam.native.$n.log" "${kk[@]}" "${eam[@]}" -var pair eam -var coeff "1 1 potentials/Cu_u3.eam")
  read -r t_distspec _ < <(measure "$out/eam.distspec.$n.log" "${kk[@]}" "${eam[@]}" -var pair "distspec timing yes" \
      -var coeff "* * potentials/cu_eam_u3.json Cu")
  row eam "$atoms" eam/kk "$t_native" distspec/kk "$t_distspec"
done
for layers in 2 4; do
  for n in $mpnn_cells; do
    mp=(-var lattice 3.615 -var mass 63.546 -var temp 600 -var n "$n" -var steps "$mpnn_steps" -var coeff "* * potentials/cu_mpnn_L$layers.json Cu")
    read -r t_host atoms < <(measure "$out/mpnn$layers.device_cuda.$n.log" "${mp[@]}" -var pair "distspec device cuda timing yes")
    read -r t_kk _ < <(measure "$out/mpnn$layers.distspec_kk.$n.log" "${kk[@]}" "${mp[@]}" -var pair "distspec timing yes")
    row "mpnn$layers" "$atoms" "distspec_device_cuda" "$t_host" distspec/kk "$t_kk"
  done
done
