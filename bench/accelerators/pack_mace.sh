#!/usr/bin/env bash
# Packs what bench/accelerators/mace_gpu.sh needs on a GPU machine beside its own torch (2.11,
# Python 3.12, e3nn 0.6, numpy, scipy; no LAMMPS, MPI, mace-torch or network):
#   OUT_DIR/torch-run.tar.xz   scripts/pack_gpu_torch_run.sh's bundle: LAMMPS 4 Feb 2025, the
#                              plugin and libdistspec_mace_ops.so built against that torch, OpenMPI,
#                              and the libdw Nsight Systems' importer needs there
#   OUT_DIR/site.tar.xz        mace-torch and what it imports that the machine lacks, so that
#                              mace-torch's own calculator runs in the same job (unpack it there
#                              and put site/ first on PYTHONPATH: mace-torch pins e3nn 0.4.4)
#   bench/accelerators/pack_mace.sh [OUT_DIR]        default build-gpu-mace
# About 17 MB. The exports go in OUT_DIR/model (run.sh's header says how to make them).
# The pure-Python packages are copied from the bootstrap's MACE environment; h5py, matscipy,
# lmdb and orjson have compiled extensions, so their wheels for the GPU machine's Python are
# fetched with pip, at the versions installed here.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root/build-gpu-mace}")
cache=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
gpu_python=${DISTSPEC_GPU_PYTHON_VERSION:-3.12}
# shellcheck source=/dev/null
source "$cache/env.sh"
python=${DISTSPEC_PYTHON_MACE:?no MACE environment (scripts/bootstrap.sh makes it)}
# The MACE environment's site-packages, then those of the environment it extends.
sites=$("$python" -c 'import sys; print(" ".join(p for p in sys.path if p.endswith("site-packages")))')

rm -rf "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out" "$tmp/site"
copy() {  # PACKAGE DIST: the package (folder or module) and its dist-info (importlib.metadata reads versions)
  local site
  for site in $sites; do
    [ -e "$site/$1" ] || continue
    cp -a "$site/$1" "$tmp/site/"
    cp -a "$site/$2"-*.dist-info "$tmp/site/"
    return
  done
  echo "pack_mace: $1 is not in $sites" >&2
  return 1
}
copy mace mace_torch
copy e3nn e3nn
copy opt_einsum opt_einsum
copy opt_einsum_fx opt_einsum_fx
copy ase ase
copy torch_ema torch_ema
copy prettytable prettytable
copy wcwidth wcwidth
copy torchmetrics torchmetrics
copy lightning_utilities lightning_utilities
copy configargparse.py configargparse
copy hostlist.py python_hostlist
copy tqdm tqdm
copy yaml pyyaml
rm -rf "$tmp/site/ase/test" "$tmp/site/ase/gui" "$tmp/site"/yaml/_yaml*.so
# mace.tools imports its trainer, which imports the training plotter, which imports matplotlib and
# pandas (about 20 MB more to carry). The calls timed there never plot: a stand-in module says so.
cat > "$tmp/site/mace/cli/visualise_train.py" <<'PY'
"""Stand-in packed by bench/accelerators/pack_mace.sh for a GPU machine without matplotlib and
pandas: mace.tools.train imports TrainingPlotter; the model calls timed there never plot."""


class TrainingPlotter:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("mace-torch packed by bench/accelerators/pack_mace.sh has no training plots")
PY
find "$tmp/site" -name __pycache__ -prune -exec rm -rf {} +

version() { "$python" -c "import importlib.metadata as m; print(m.version('$1'))"; }
"$python" -m pip download --no-deps --only-binary=:all: --python-version "$gpu_python" \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --disable-pip-version-check -q -d "$tmp/wheels" \
  "h5py==$(version h5py)" "matscipy==$(version matscipy)" "lmdb==$(version lmdb)" "orjson==$(version orjson)"
for wheel in "$tmp"/wheels/*.whl; do (cd "$tmp/site" && python3 -m zipfile -e "$wheel" .); done
tar cf - -C "$tmp" site | xz -T2 -6 > "$out/site.tar.xz"
"$root/scripts/pack_gpu_torch_run.sh" "$tmp/build-gpu-torch-run"
tar cf - -C "$tmp" build-gpu-torch-run | xz -T2 -6 > "$out/torch-run.tar.xz"
du -sh "$out"/*
