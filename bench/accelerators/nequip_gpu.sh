#!/usr/bin/env bash
# bench/accelerators/nequip_run.sh on a GPU machine that has its own torch but no LAMMPS, MPI,
# nequip or network, from two bundles carried there: scripts/pack_gpu_source.sh's (LAMMPS'
# source, OpenMPI; default build-gpu-src) and bench/accelerators/pack_nequip.sh's (nequip and what
# it imports, the halo spec, OpenEquivariance's source; default build-gpu-nequip).
#
#   bench/accelerators/nequip_gpu.sh setup
#       unpacks nequip, builds OpenEquivariance against the machine's torch (about 20 s), then
#       LAMMPS and the plugin (scripts/gpu_build.sh, 2.5 to 10 minutes: log build-gpu.log) side
#       by side with `nequip_run.sh prepare` (the checkpoints, DISTSPEC's exports and
#       nequip-compile's packages).
#   bench/accelerators/nequip_gpu.sh bench [MODELS]      (default "nequip allegro")
#       `nequip_run.sh bench` for MODELS, then packs the run folder (results.csv, table.md, logs;
#       not its model files) into $OUT/nequip.tar.gz when OUT is set (bring_back.sh; OUT is the
#       device machine's folder of files that come back).
#   bench/accelerators/nequip_gpu.sh sevennet
#       SevenNet-0 through bench/accelerators/run.sh (OpenEquivariance), with SevenNet's own call
#       beside it (sevenn from scripts/pack_gpu_source.sh --sevenn's bundle); its run folder comes
#       back as $OUT/sevennet-NAME.tar.gz (SEVENNET_OUT, default build/bench/accelerators: NAME
#       accelerators; BENCH_OWN_CALL=0 leaves SevenNet's own call out). With PROFILE_CELLS set,
#       then Nsight Systems' kernel classes of that size (nsys_profile.sh; PROFILE_STEPS, 1).
# Where scripts/pack_gpu_torch_run.sh's bundle is carried too (GPU_RUN, default
# build-gpu-torch-run: LAMMPS, the plugin and OpenMPI built elsewhere against this machine's
# torch), setup builds only OpenEquivariance here. bench/accelerators/pack_gpu_carry.sh makes
# both bundles at once, compressed into build-gpu-carry, which this script unpacks.
#
# Each step keeps what it made (build-gpu, build-oeq and build/bench/nequip are paths git ignores,
# which the machine keeps while it stays warm), so a call that ran out of time is repeated and
# resumes (results.py remakes results.csv from the logs of a bench call that ran out of time).
# Environment: DISTSPEC_PYTHON (python3), GPU_SRC, GPU_NEQUIP, GPU_DEADLINE, BENCH_OUT, and
# nequip_run.sh's BENCH_* variables.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$(realpath -m "${GPU_SRC:-$root/build-gpu-src}")
# LAMMPS, the plugin and OpenMPI built on a machine without a GPU against this machine's torch
# version (scripts/pack_gpu_torch_run.sh): where carried, nothing is compiled here but
# OpenEquivariance.
packed=$(realpath -m "${GPU_RUN:-$root/build-gpu-torch-run}")
bundle=$(realpath -m "${GPU_NEQUIP:-$root/build-gpu-nequip}")
# bench/accelerators/pack_gpu_carry.sh's compressed bundles, unpacked once per machine.
carried=$root/build-gpu-carry
if [ -f "$carried/torch-run.tar.xz" ] && [ ! -f "$packed/env.sh" ]; then
  tar xJf "$carried/torch-run.tar.xz" -C "$(dirname "$packed")"
  [ "$(basename "$packed")" = build-gpu-torch-run ] || mv "$(dirname "$packed")/build-gpu-torch-run" "$packed"
fi
if [ -f "$carried/sevenn.tar.xz" ] && [ ! -d "$src/site" ]; then
  mkdir -p "$src" && tar xJf "$carried/sevenn.tar.xz" -C "$src"
fi
oeq=$root/build-oeq
[ -d "$bundle/site" ] || tar xJf "$bundle/site.tar.xz" -C "$bundle"
export PYTHONPATH="$bundle/site:$oeq/site${PYTHONPATH:+:$PYTHONPATH}"
export DISTSPEC_PYTHON=${DISTSPEC_PYTHON:-python3} DISTSPEC_SPECS=$bundle/specs
export DISTSPEC_OPENEQUIVARIANCE_LIBRARY=$oeq/lib/liboeq_stable_cuda_aoti.so
export BENCH_OUT=${BENCH_OUT:-$root/build/bench/nequip}
start=$(date +%s)
# Each call stops its work by GPU_DEADLINE seconds (540), so that its logs still come back
# through OUT before the device machine's 10-minute limit; a repeated call resumes.
deadline=${GPU_DEADLINE:-540}
left() { echo $(( deadline - ($(date +%s) - start) )); }
say() { echo "nequip_gpu [$(( $(date +%s) - start )) s]: $*" >&2; }
say "$(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || echo 'no GPU')"

# OpenEquivariance against this machine's torch, once per machine (about 20 s).
build_oeq() {
  if [ ! -f "$DISTSPEC_OPENEQUIVARIANCE_LIBRARY" ]; then
    "$root/scripts/build_openequivariance.sh" "$DISTSPEC_PYTHON" "$oeq" "$bundle"/openequivariance-*.tar.gz >&2
    say "OpenEquivariance built"
  fi
}

case ${1:-} in
  setup)
    build_oeq
    if [ -f "$packed/env.sh" ]; then
      : > "$root/build-gpu.log"; true & build=$!
    else
      "$root/scripts/gpu_build.sh" "$src" "$root/build-gpu" > "$root/build-gpu.log" 2>&1 &
      build=$!
    fi
    status=0
    timeout "$(left)" "$root/bench/accelerators/nequip_run.sh" prepare || status=1
    say "prepare finished (status $status); waiting for LAMMPS and the plugin"
    while kill -0 "$build" 2>/dev/null && [ "$(left)" -gt 0 ]; do sleep 5; done
    if kill -0 "$build" 2>/dev/null; then
      say "LAMMPS and the plugin are still building: run setup again"; kill "$build"; status=1
    else
      wait "$build" || { status=1; tail -20 "$root/build-gpu.log" >&2; }
    fi
    grep -h "gpu_build:" "$root/build-gpu.log" >&2 || true
    if [ -n "${OUT:-}" ]; then  # the logs, for a setup that failed
      mkdir -p "$OUT/setup"
      cp "$root/build-gpu.log" "$OUT/setup/" 2>/dev/null || true
      for f in "$BENCH_OUT"/*/*.log; do [ -f "$f" ] && cp "$f" "$OUT/setup/$(basename "$(dirname "$f")").$(basename "$f")"; done
    fi
    say "setup finished (status $status)"
    exit $status ;;
  bench)
    # shellcheck source=/dev/null
    if [ -f "$packed/env.sh" ]; then
      source "$packed/env.sh"  # mpirun, lmp, the plugin and the libraries of the packed build
    else
      source "$src/env.sh"  # mpirun and the libraries of the bundle
      export DISTSPEC_PLUGIN=$root/build-gpu/plugin/libdistspec.so DISTSPEC_LMP=$root/build-gpu/lammps/build/lmp
    fi
    status=0
    BENCH_MODELS=${2:-nequip allegro} timeout "$(left)" "$root/bench/accelerators/nequip_run.sh" bench || status=1
    "$root/bench/accelerators/bring_back.sh" "$BENCH_OUT" nequip
    exit $status ;;
  sevennet)
    # SevenNet-0 through run.sh (OpenEquivariance), beside SevenNet's own call: sevenn and its
    # specs from scripts/pack_gpu_source.sh --sevenn's bundle.
    # shellcheck source=/dev/null
    build_oeq
    source "$packed/env.sh"
    export PYTHONPATH="$src/site:$PYTHONPATH" DISTSPEC_SPECS=$src/specs
    out=$(realpath -m "${SEVENNET_OUT:-$root/build/bench/accelerators}")
    status=0
    BENCH_ACCELERATORS=${BENCH_ACCELERATORS:-oeq} BENCH_OWN_CALL=${BENCH_OWN_CALL:-1} BENCH_OUT=$out \
      timeout "$(left)" "$root/bench/accelerators/run.sh" || status=1
    # PROFILE_CELLS: Nsight Systems' kernel summary and classes of the export at that size.
    if [ -n "${PROFILE_CELLS:-}" ] && [ "$(left)" -gt 60 ]; then
      say "nsys, SevenNet-0 (oeq), $PROFILE_CELLS cells"
      PROFILE_TIMEOUT=$(left) PROFILE_LIBS=$(dirname "$DISTSPEC_PLUGIN") "$root/bench/accelerators/nsys_profile.sh" \
        "$out" model/7net0_oeq.json oeq "$PROFILE_CELLS" "${PROFILE_STEPS:-1}" || status=1
    fi
    "$root/bench/accelerators/bring_back.sh" "$out" "sevennet-$(basename "$out")"
    exit $status ;;
  *) echo "usage: nequip_gpu.sh setup | bench [MODELS] | sevennet" >&2; exit 2 ;;
esac
