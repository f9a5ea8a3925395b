#!/usr/bin/env bash
# Packs what bench/accelerators/nequip_run.sh needs on a GPU machine beside its own torch (2.11,
# Python 3.12, e3nn 0.6, numpy, scipy; no nequip, no network): nequip and nequip-allegro with the
# packages they import that the machine lacks, the halo spec nvalchemi saves here, and
# OpenEquivariance's source distribution (scripts/build_openequivariance.sh builds it there).
#   bench/accelerators/pack_nequip.sh [OUT_DIR]        default build-gpu-nequip
# Writes OUT_DIR/site.tar.xz (unpack it there and put site/ on PYTHONPATH), OUT_DIR/specs
# (DISTSPEC_SPECS) and OUT_DIR/openequivariance-0.7.0.tar.gz. About 10 MB.
# The pure-Python packages are copied from the bootstrap's nequip environment; matscipy and lmdb
# have compiled extensions, so their wheels for the GPU machine's Python are fetched with pip.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root/build-gpu-nequip}")
cache=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
gpu_python=${DISTSPEC_GPU_PYTHON_VERSION:-3.12}
oeq=0.7.0
# shellcheck source=/dev/null
source "$cache/env.sh"
site_of() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
nequip_site=$(site_of "$DISTSPEC_PYTHON_NEQUIP")
base_site=$(site_of "$DISTSPEC_PYTHON")

rm -rf "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out" "$tmp/site"
copy() {  # SITE PACKAGE DIST: the package folder and its dist-info (importlib.metadata reads versions)
  cp -a "$1/$2" "$tmp/site/"
  cp -a "$1/$3"-*.dist-info "$tmp/site/"
}
copy "$nequip_site" nequip nequip
copy "$nequip_site" allegro nequip_allegro
copy "$nequip_site" lightning lightning
cp -a "$nequip_site/lightning_fabric" "$tmp/site/"  # its dist-info is lightning's
copy "$nequip_site" pytorch_lightning pytorch_lightning
copy "$nequip_site" lightning_utilities lightning_utilities
copy "$nequip_site" torchmetrics torchmetrics
copy "$nequip_site" ase ase
copy "$nequip_site" packaging packaging
for pkg in hydra omegaconf yaml; do
  dist=$pkg; [ $pkg = hydra ] && dist=hydra_core; [ $pkg = yaml ] && dist=pyyaml
  copy "$base_site" "$pkg" "$dist"
done
cp -a "$base_site/antlr4" "$base_site"/antlr4_python3_runtime-*.dist-info "$tmp/site/"
rm -rf "$tmp/site/ase/test" "$tmp/site/ase/gui" "$tmp/site/lightning/app" "$tmp/site"/yaml/_yaml*.so
find "$tmp/site" -name __pycache__ -prune -exec rm -rf {} +

# The compiled ones, as wheels for the GPU machine's Python, at the versions installed here.
version() { "$DISTSPEC_PYTHON_NEQUIP" -c "import importlib.metadata as m; print(m.version('$1'))"; }
"$DISTSPEC_PYTHON_NEQUIP" -m pip download --no-deps --only-binary=:all: --python-version "$gpu_python" \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --disable-pip-version-check -q -d "$tmp/wheels" "matscipy==$(version matscipy)" "lmdb==$(version lmdb)"
for wheel in "$tmp"/wheels/*.whl; do (cd "$tmp/site" && python3 -m zipfile -e "$wheel" .); done
tar cJf "$out/site.tar.xz" -C "$tmp" site

"$DISTSPEC_PYTHON" "$root/bench/sevennet_gpu/specs.py" "$out/specs" > /dev/null
sdist=$cache/src/openequivariance-$oeq.tar.gz
# --no-binary for this package alone: `:all:` would build its build requirements from source too
# (CMake among them) to prepare its metadata, which takes longer than everything else here.
[ -f "$sdist" ] || "$DISTSPEC_PYTHON" -m pip download --no-deps --no-binary openequivariance \
  --disable-pip-version-check -q -d "$cache/src" "openequivariance==$oeq"
cp "$sdist" "$out/"
du -sh "$out" "$out"/*
