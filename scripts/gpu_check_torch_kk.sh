#!/usr/bin/env bash
# On a GPU machine: exported torch models resident on the GPU under distspec/kk against the same
# models exported for the CPU under the plain style on the CPU (examples/gpu/in.gpu_check_torch_kk),
# on 1 and 2 ranks (sharing the GPU), newton on and off: the toy MPNN (fp64) after 50 NVE steps
# with reneighbouring, and, where the fixtures have them, SevenNet-0 (fp32) and SevenNet's serial
# module (one rank) at the first step. Prints one PASS or FAIL line per run and exits non-zero
# on any FAIL.
#   scripts/gpu_check_torch_kk.sh LMP PLUGIN FIXTURES [LOG_DIR]
# FIXTURES: scripts/gpu_torch_fixtures.sh's folder; LMP, PLUGIN: DISTSPEC_GPU_TORCH=ON
# scripts/gpu_build_kokkos.sh's. DISTSPEC_KK_ARGS ("-k on g 1 -sf kk") runs distspec/kk elsewhere
# (-k on t 2 -sf kk on a CPU, with the CPU exports in place of the CUDA ones: the same check of
# the Kokkos path on host threads). DISTSPEC_CHECK_MODELS ("toy_mpnn_L2 7net0 7net0_serial") picks
# the models.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lmp=$(realpath "${1:?usage: gpu_check_torch_kk.sh LMP PLUGIN FIXTURES [LOG_DIR]}")
plugin=$(realpath "${2:?PLUGIN}")
fixtures=$(realpath "${3:?FIXTURES}")
logs=$(realpath -m "${4:-$fixtures/check}")
mkdir -p "$logs"
plugin_dir=$(dirname "$plugin")
export LD_LIBRARY_PATH="$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=0

# one NP NEWTON TAG DATA ELEMENTS STEPS TOLERANCE CPU_MODEL KK_MODEL
one() {
  local np=$1 newton=$2 tag=$3 data=$4 elements=$5 steps=$6 tol=$7 cpu=$8 kk=$9 neigh=full
  [ "$newton" = on ] && neigh=half
  local vars=(-var plugin "$(basename "$plugin")" -var newton "$newton" -var data "$fixtures/$data" -var elements "$elements"
              -var steps "$steps")
  mpirun --oversubscribe -np "$np" "$lmp" -in "$root/examples/gpu/in.gpu_check_torch_kk" "${vars[@]}" \
    -var model "$fixtures/$cpu" -var tag cpu -log "$logs/$tag.np$np.$newton.cpu.log" -screen none > /dev/null 2>&1
  # shellcheck disable=SC2086
  mpirun --oversubscribe -np "$np" "$lmp" ${DISTSPEC_KK_ARGS:--k on g 1 -sf kk} -pk kokkos newton "$newton" neigh "$neigh" \
    -in "$root/examples/gpu/in.gpu_check_torch_kk" "${vars[@]}" -var model "$fixtures/$kk" -var tag kk \
    -log "$logs/$tag.np$np.$newton.kk.log" -screen none > /dev/null 2>&1
  cat "$logs/$tag.np$np.$newton.cpu.log" "$logs/$tag.np$np.$newton.kk.log" | awk -v name="$tag np $np newton $newton" -v tol="$tol" '
    $1 == "CHECK" { for (i = 3; i <= NF; ++i) v[$2, i] = $i; n = NF }
    $1 == "ERROR:" && !err { err = $0 }
    END { worst = 0
          for (i = 3; i <= n; ++i) { a = v["cpu", i]; b = v["kk", i]; s = (a < 0 ? -a : a); if (s < 1e-6) s = 1e-6
                                     d = (a - b) / s; d = d < 0 ? -d : d; if (d > worst) worst = d }
          ok = n > 3 && (("cpu", 3) in v) && (("kk", 3) in v) && worst <= tol
          printf "%s %s: worst relative deviation distspec/kk on the GPU vs the plain style on the CPU %.3g (bound %g)%s\n",
                 ok ? "PASS" : "FAIL", name, worst, tol, err ? " -- " err : ""
          exit !ok }' || failed=1
}

models=" ${DISTSPEC_CHECK_MODELS:-toy_mpnn_L2 7net0 7net0_serial} "
for np in 1 2; do
  for newton in on off; do
    [[ "$models" == *" toy_mpnn_L2 "* ]] &&
      one "$np" "$newton" toy_mpnn_L2 cuni_fcc.data "Cu Ni" 50 1e-9 toy_mpnn_L2.json toy_mpnn_L2_cuda.json
    [[ "$models" == *" 7net0 "* ]] && [ -f "$fixtures/7net0_cuda.json" ] && [ -f "$fixtures/7net0.json" ] &&
      one "$np" "$newton" 7net0 si_diamond.data Si 0 1e-5 7net0.json 7net0_cuda.json
    [[ "$models" == *" 7net0_serial "* ]] && [ "$np" = 1 ] && [ -f "$fixtures/7net0_serial.json" ] &&
      one "$np" "$newton" 7net0_serial si_diamond.data Si 0 1e-5 7net0_serial.json 7net0_serial.json
  done
done
exit $failed
