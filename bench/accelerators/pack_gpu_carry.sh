#!/usr/bin/env bash
# Everything bench/accelerators/nequip_gpu.sh needs on a GPU machine, built and packed here, in
# two folders small enough to carry together (the device's limit is 64 MiB with the working tree):
#   OUT_DIR/torch-run.tar.xz   scripts/pack_gpu_torch_run.sh: LAMMPS 4 Feb 2025, the plugin with
#                              CUDA and torch (built here against the GPU machine's torch), OpenMPI
#   OUT_DIR/sevenn.tar.xz      scripts/pack_gpu_source.sh --sevenn's site/ and specs/ (sevenn with
#                              SevenNet-0, ase, e3nn; the halo specs)
#   build-gpu-nequip/          bench/accelerators/pack_nequip.sh: nequip, nequip-allegro, the
#                              halo spec, OpenEquivariance's source
#   bench/accelerators/pack_gpu_carry.sh [OUT_DIR]        default build-gpu-carry
# Then carry OUT_DIR and build-gpu-nequip; nequip_gpu.sh unpacks OUT_DIR where it finds it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root/build-gpu-carry}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/scripts/pack_gpu_torch_run.sh" "$work/build-gpu-torch-run"
"$root/scripts/pack_gpu_source.sh" --sevenn "$work/build-gpu-src"
"$root/bench/accelerators/pack_nequip.sh"
rm -rf "$out"
mkdir -p "$out"
tar cf - -C "$work" build-gpu-torch-run | xz -T2 -6 > "$out/torch-run.tar.xz"
tar cf - -C "$work/build-gpu-src" site specs | xz -T2 -6 > "$out/sevenn.tar.xz"
du -sh "$out"/* "$root/build-gpu-nequip" >&2
