#!/usr/bin/env bash
# Nsight Systems' kernel and CUDA API summaries of a few steps of one exported model through
# `pair_style distspec device cuda` (bench/sevennet_cpu/in.bench: rattled Si, the warm-up step
# and STEPS more), on one rank, into FOLDER/kernels.TAG_cuda_gpu_kern_sum.csv and
# FOLDER/kernels.TAG_cuda_api_sum.csv; then kernel_classes.py's table of them.
#   bench/accelerators/nsys_profile.sh FOLDER MODEL_JSON TAG [CELLS (11)] [STEPS (1)]
# MODEL_JSON is relative to FOLDER. Environment: DISTSPEC_LMP, DISTSPEC_PLUGIN (a packed build's
# env.sh sets both), NSYS (found under /usr/local/cuda* or /opt/nvidia), DISTSPEC_PYTHON,
# PROFILE_LIBS (libdw and libelf for nsys' importer where the machine lacks them: the packed
# build's lib/), PROFILE_TIMEOUT (seconds, 300).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
folder=$1 model=$2 tag=$3 cells=${4:-11} steps=${5:-1}
nsys=${NSYS:-$(command -v nsys || find /usr/local/cuda*/bin /opt/nvidia -name nsys -type f 2>/dev/null | head -1)}
[ -n "$nsys" ] || { echo "nsys_profile: no nsys on this machine" >&2; exit 1; }
limit=${PROFILE_TIMEOUT:-300}
status=0
(cd "$folder" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
  LD_LIBRARY_PATH="$(dirname "$DISTSPEC_PLUGIN"):${LD_LIBRARY_PATH:-}" timeout "$limit" \
  "$nsys" profile -t cuda --sample=none --cpuctxsw=none -o "profile.$tag" -f true "$DISTSPEC_LMP" \
  -in "$repo/bench/sevennet_cpu/in.bench" -log "log.profile.$tag" -screen none \
  -var plugin "$(basename "$DISTSPEC_PLUGIN")" -var n "$cells" -var steps "$steps" -var model "$model" \
  -var device cuda > "nsys.$tag.out" 2>&1) || status=1
# nsys turns its stream into a report with QdstrmImporter, which needs elfutils' libdw (on one H100
# machine it was missing: "libdw.so.1: cannot open shared object file"): without a report, run the
# importer again with the packed libraries (scripts/pack_gpu_torch_run.sh packs libdw).
if [ ! -f "$folder/profile.$tag.nsys-rep" ] && [ -f "$folder/profile.$tag.qdstrm" ]; then
  importer=$(find "$(dirname "$(readlink -f "$nsys")")/.." -name QdstrmImporter -type f 2>/dev/null | head -1)
  (cd "$folder" && LD_LIBRARY_PATH="${PROFILE_LIBS:-}" timeout "$limit" "$importer" -i "profile.$tag.qdstrm") \
    >> "$folder/nsys.$tag.out" 2>&1 || status=1
fi
env -u LD_LIBRARY_PATH "$nsys" stats --report cuda_gpu_kern_sum --report cuda_api_sum --format csv \
  --force-export true -o "$folder/kernels.$tag" "$folder/profile.$tag.nsys-rep" >> "$folder/nsys.$tag.out" 2>&1 || status=1
rm -f "$folder/profile.$tag".{nsys-rep,sqlite,qdstrm}
kernels=$folder/kernels.${tag}_cuda_gpu_kern_sum.csv
if [ -f "$kernels" ]; then
  "${DISTSPEC_PYTHON:-python3}" "$here/kernel_classes.py" "$kernels" | tee "$folder/kernel_classes.$tag.md" >&2
else
  echo "nsys_profile: no kernel summary ($folder/nsys.$tag.out):" >&2; tail -5 "$folder/nsys.$tag.out" >&2; status=1
fi
exit $status
