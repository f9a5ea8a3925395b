#!/usr/bin/env bash
# `BENCH_MODEL=mace bench/accelerators/run.sh` on a GPU machine that has its own torch but no
# LAMMPS, MPI, mace-torch or network, from one folder carried there (GPU_MACE, default
# build-gpu-mace), which bench/accelerators/pack_mace.sh fills here:
#   torch-run.tar.xz   LAMMPS, the plugin and libdistspec_mace_ops.so built against the GPU
#                      machine's torch, OpenMPI
#   site.tar.xz        mace-torch and what it imports there
#   model/             the exports (mace_ACC.json, graph and spec), made here as run.sh's header
#                      says, with BENCH_MACE_ARGS' build() arguments
#
#   bench/accelerators/mace_gpu.sh bench      run.sh (forces on 1 and 2 ranks against mace-torch's
#                                             calculator, seconds and memory per size), then
#                                             mace-torch's own call (mace_calculator.py) beside it
#   bench/accelerators/mace_gpu.sh nve        1 000 NVE steps of 512 atoms per export in model/;
#                                             drift.py's table (nve.md)
#   bench/accelerators/mace_gpu.sh profile    Nsight Systems' kernel and CUDA API summaries of 2
#                                             steps at 10 648 atoms (PROFILE_CELLS 11, PROFILE_STEPS 1:
#                                             the steps after the warm-up step) per export, and their
#                                             kernel classes (nsys_profile.sh)
# Each packs its run folder (no model files) into $OUT/mace.tar.gz when OUT is set (bring_back.sh).
# Environment: BENCH_ACCELERATORS (mace-kernels), BENCH_MACE_ARGS (the exports' build()
# arguments, '{"inter_scale": 3000}'), BENCH_CELLS_mace_kernels, MACE_OWN_CELLS ("11 17"), NVE_CELLS (4),
# NVE_STEPS (1000), GPU_DEADLINE (540 s), NSYS.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carried=$(realpath -m "${GPU_MACE:-$root/build-gpu-mace}")
run=$root/build-gpu-mace-run  # unpacked once per machine; git ignores it
start=$(date +%s)
deadline=${GPU_DEADLINE:-540}
left() { echo $(( deadline - ($(date +%s) - start) )); }
say() { echo "mace_gpu [$(( $(date +%s) - start )) s]: $*" >&2; }
[ -f "$run/build-gpu-torch-run/env.sh" ] || { mkdir -p "$run" && tar xJf "$carried/torch-run.tar.xz" -C "$run"; }
[ -d "$run/site" ] || tar xJf "$carried/site.tar.xz" -C "$run"
# shellcheck source=/dev/null
source "$run/build-gpu-torch-run/env.sh"
export PYTHONPATH="$run/site${PYTHONPATH:+:$PYTHONPATH}" DISTSPEC_PYTHON=${DISTSPEC_PYTHON:-python3}
export BENCH_MODEL=mace BENCH_ACCELERATORS=${BENCH_ACCELERATORS:-mace-kernels}
export BENCH_MACE_ARGS=${BENCH_MACE_ARGS:-'{"inter_scale": 3000}'}
out=$root/build/bench/accelerators/mace
mkdir -p "$out/model"
cp -n "$carried"/model/* "$out/model/" 2>/dev/null
say "$(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || echo 'no GPU')"
bring_back() { "$root/bench/accelerators/bring_back.sh" "$out" mace; }
lammps() {  # log n steps model
  (cd "$out" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
    LD_LIBRARY_PATH="$(dirname "$DISTSPEC_PLUGIN"):$LD_LIBRARY_PATH" timeout "$(left)" \
    mpirun -np 1 "$DISTSPEC_LMP" -in "$root/bench/sevennet_cpu/in.bench" -log "$1" -screen none \
    -var plugin "$(basename "$DISTSPEC_PLUGIN")" -var n "$2" -var steps "$3" -var model "$4" -var device cuda)
}

status=0
case ${1:-} in
  bench)
    timeout "$(left)" "$root/bench/accelerators/run.sh" || status=1
    say "mace-torch's own call"
    (cd "$out" && "$DISTSPEC_PYTHON" "$root/bench/accelerators/mace_mp0_medium.py" save own.model &&
      timeout "$(left)" "$DISTSPEC_PYTHON" "$root/bench/accelerators/mace_calculator.py" own.model \
        --accelerators e3nn --cells ${MACE_OWN_CELLS:-11 17}) > "$out/model_call.log" 2>&1 || status=1
    tail -8 "$out/model_call.log" >&2 ;;
  nve)
    for json in "$out"/model/mace_*.json; do
      [[ $json == *.spec.json ]] && continue
      acc=$(basename "$json" .json); acc=${acc#mace_}
      for n in ${NVE_CELLS:-4}; do
        say "NVE, $acc, $((8 * n * n * n)) atoms, ${NVE_STEPS:-1000} steps"
        lammps "log.nve.$acc.$n" "$n" "${NVE_STEPS:-1000}" "model/$(basename "$json")" || status=1
      done
    done
    (cd "$out" && "$DISTSPEC_PYTHON" "$root/bench/accelerators/drift.py" log.nve.*) | tee "$out/nve.md" ;;
  profile)
    for acc in $BENCH_ACCELERATORS; do
      say "nsys, $acc, ${PROFILE_CELLS:-11} cells, ${PROFILE_STEPS:-1} steps after the warm-up step"
      PROFILE_TIMEOUT=$(left) PROFILE_LIBS=$run/build-gpu-torch-run/lib "$root/bench/accelerators/nsys_profile.sh" \
        "$out" "model/mace_$acc.json" "$acc" "${PROFILE_CELLS:-11}" "${PROFILE_STEPS:-1}" || status=1
    done ;;
  *) echo "usage: mace_gpu.sh bench | nve | profile" >&2; exit 2 ;;
esac
bring_back
exit $status
