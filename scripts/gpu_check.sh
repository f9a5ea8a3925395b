#!/usr/bin/env bash
# Runs examples/gpu/in.gpu_check (LJ, EAM, the message-passing model), in.gpu_check_ewald
# (Ewald and PME), in.gpu_check_eam_fs (Finnis-Sinclair EAM) and in.gpu_check_dftd3 (DFT-D3 with
# BJ, zero damping and the nearest-reference fallback) with serial LAMMPS + the CUDA plugin and
# compares, per model, the `device cpu` and
# `device cuda` numbers (pe, press, 9 force components) to 1e-10 relative (against
# max(|cpu|, |cuda|, 1e-6)). Exit 1 on a mismatch or a missing model.
#   LMP=path/to/lmp DISTSPEC_PLUGIN=path/to/libdistspec.so scripts/gpu_check.sh [LOG]
# DISTSPEC_GPU_CHECK_RANKS=N runs each input on N ranks sharing the GPU (mpirun, gpu_share yes):
# both devices then see the same decomposition, and the GPU's exchanges (rows packed on the GPU
# for swaps with other ranks, swaps with the rank itself copied in place on the GPU) are held to
# the CPU's.
# LOG (default gpu_check.log) and, beside it, LOG's name with _ewald, _eam_fs and _dftd3 for the others.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lmp=${LMP:-lmp}
plugin=${DISTSPEC_PLUGIN:-$root/build-gpu/libdistspec.so}
log=$(realpath -m "${1:-gpu_check.log}")
cd "$root/examples/gpu"
# The plugin by file name on the loader path and the potentials relative to this folder: LAMMPS
# echoes each command into the log, which then names no path of this machine.
export LD_LIBRARY_PATH="$(cd "$(dirname "$plugin")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ewald_log=${log%.log}_ewald.log
fs_log=${log%.log}_eam_fs.log
d3_log=${log%.log}_dftd3.log
ranks=${DISTSPEC_GPU_CHECK_RANKS:-1} launch=() share=no
[ "$ranks" -gt 1 ] && launch=(mpirun --oversubscribe -np "$ranks") share=yes
for run in "in.gpu_check $log" "in.gpu_check_ewald $ewald_log" "in.gpu_check_eam_fs $fs_log" "in.gpu_check_dftd3 $d3_log"; do
  set -- $run
  if ! "${launch[@]}" "$lmp" -in "$1" -var plugin "$(basename "$plugin")" -var pot ../../potentials \
      -var cases ../../unittest/integration/cases/models -var gpu_share "$share" -log "$2" -screen none; then
    grep -B2 -A2 "ERROR" "$2" || tail -20 "$2"
    echo "FAIL: LAMMPS stopped on $1 (log $2)"
    exit 1
  fi
done
grep -hE "^(DISTSPEC: device|NVE|Performance|Loop time .* for [1-9])" "$log" "$ewald_log" "$fs_log" "$d3_log" || true
awk '
  $1 == "CHECK" { key = $2; for (i = 4; i <= NF; ++i) v[key, $3, i] = $i; n[key] = NF; seen[key, $3] = 1 }
  END {
    bad = 0; nm = split("lj eam mpnn ewald pme pme_triclinic eam_fs d3_bj d3_zero d3_bj_nearest", models, " ")
    for (m = 1; m <= nm; ++m) {
      k = models[m]
      if (!seen[k, "cpu"] || !seen[k, "cuda"]) { printf "FAIL %s: missing cpu or cuda line\n", k; bad = 1; continue }
      worst = 0
      for (i = 4; i <= n[k]; ++i) {
        a = v[k, "cpu", i] + 0; b = v[k, "cuda", i] + 0
        s = (a < 0 ? -a : a); t = (b < 0 ? -b : b); if (t > s) s = t; if (s < 1e-6) s = 1e-6
        d = a - b; if (d < 0) d = -d; r = d / s; if (r > worst) worst = r
      }
      printf "%s %s: cpu pe %s press %s | cuda pe %s press %s | worst rel diff %.3g\n", (worst <= 1e-10 ? "PASS" : "FAIL"), k,
             v[k, "cpu", 4], v[k, "cpu", 5], v[k, "cuda", 4], v[k, "cuda", 5], worst
      if (worst > 1e-10) bad = 1
    }
    exit bad
  }' "$log" "$ewald_log" "$fs_log" "$d3_log"
