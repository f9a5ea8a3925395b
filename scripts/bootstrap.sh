#!/usr/bin/env bash
# Installs what DISTSPEC needs on Debian 12 and builds the three LAMMPS versions it supports,
# from Debian *source* packages, into a cache outside the repository.
#
#   A: LAMMPS 29 Sep 2021 Update 2 (bookworm lammps 20220106.git7586adbb6a+ds1-2), shared lib +
#      lmp, MPI, PLUGIN, KOKKOS (external Kokkos 3.4.01, OpenMP+Serial, built from bookworm's
#      trilinos source), MANYBODY, KSPACE, exceptions on.
#   B: LAMMPS 4 Feb 2025 (trixie lammps_20250204+dfsg.1.orig.tar.xz), CPU only, with EXTRA-PAIR
#      too (its pair_style dispersion/d3 is the reference of the DFT-D3 model's tests).
#   B': LAMMPS 4 Jul 2026 (sid lammps_20260704+dfsg.orig.tar.gz), CPU only, EXTRA-PAIR: its KOKKOS package
#      needs Kokkos >= 5.1, which no Debian source package serves.
#   C: a Python virtual environment (Debian's python3 -m venv) with pinned torch and
#      nvalchemi-toolkit, for the live interop test against nvalchemi and the torch backend;
#      MACE (mace-torch, which pins its own e3nn) and SevenNet (sevenn, another e3nn) each in a
#      venv layered on the first.
#
# Idempotent: every stage leaves a stamp in its cache folder, whose name is keyed by version and
# options, so a warm machine skips straight through. Never touches the machine's apt sources:
# source indices come from a temporary list passed with -o options.
#
# Environment: DISTSPEC_CACHE (default ~/.cache/distspec), DISTSPEC_JOBS (default nproc),
#              DISTSPEC_SKIP_APT=1 to skip the apt-get install step,
#              DISTSPEC_SKIP_PYTHON=1 to skip the Python environments (about 6.5 GB),
#              DISTSPEC_WITH_LAMMPS_2026=0 to leave LAMMPS 4 Jul 2026 out (about 5 minutes on 2 cores).
# Output: $DISTSPEC_CACHE/env.sh, which exports the paths of the builds.
# `bootstrap.sh python` runs only the Debian packages and the Python stage, and updates the
# DISTSPEC_PYTHON* lines of an existing env.sh.
set -euo pipefail

CACHE=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
JOBS=${DISTSPEC_JOBS:-$(nproc)}
mkdir -p "$CACHE/src"
log() { printf '[bootstrap] %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
# Debian packages
APT_PACKAGES=(build-essential cmake ninja-build pkg-config git ca-certificates curl xz-utils
              lz4 dpkg-dev openmpi-bin libopenmpi-dev nlohmann-json3-dev libgtest-dev
              python3 python3-venv gnuplot-nox time clang llvm valgrind ccache libfftw3-dev)
install_packages() {
  [ "${DISTSPEC_SKIP_APT:-0}" = 1 ] && return 0
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# ---------------------------------------------------------------------------------------------
# Source tarballs, checked against the Sources index of a temporary source list.
SRCLIST_DIR="$CACHE/apt-src"
APT_OPTS=(-o "Dir::Etc::SourceList=$SRCLIST_DIR/sources.list" -o "Dir::Etc::SourceParts=/dev/null" -o "APT::Sandbox::User=root"
          -o "Dir::State::Lists=$SRCLIST_DIR/lists" -o "Dir::Cache=$SRCLIST_DIR/cache")
# The archive's address is the machine's own: the first configured repository that serves the
# plain release (not -updates or -security), as apt itself lists its index targets.
debian_archive() {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
    awk '$2 !~ /-/ {sub(/\/$/, "", $1); print $1; exit}'
}
MIRROR=${DISTSPEC_DEBIAN_MIRROR:-$(debian_archive)}
[ -n "$MIRROR" ] || { log "no Debian repository in the apt configuration; set DISTSPEC_DEBIAN_MIRROR"; exit 1; }
source_index_ready=0
update_source_index() {
  [ $source_index_ready = 1 ] && return 0
  mkdir -p "$SRCLIST_DIR/lists/partial" "$SRCLIST_DIR/cache/archives/partial"
  printf 'deb-src %s bookworm main\ndeb-src %s trixie main\ndeb-src %s sid main\n' "$MIRROR" "$MIRROR" "$MIRROR" \
    > "$SRCLIST_DIR/sources.list"
  apt-get "${APT_OPTS[@]}" update -qq
  source_index_ready=1
}

# fetch_orig PACKAGE VERSION FILE: download pool/.../FILE into $CACHE/src, sha256 from Sources.
fetch_orig() {
  local pkg=$1 version=$2 file=$3 dest="$CACHE/src/$3"
  [ -f "$dest.ok" ] && return 0
  update_source_index
  local record dir sha
  record=$(apt-cache "${APT_OPTS[@]}" showsrc "$pkg" | awk -v v="$version" '
      /^Package:/ {keep=0} /^Version:/ {keep=($2==v)} keep {print}')
  dir=$(printf '%s\n' "$record" | awk '/^Directory:/ {print $2; exit}')
  sha=$(printf '%s\n' "$record" | awk -v f="$file" '/^Checksums-Sha256:/ {s=1; next} /^[^ ]/ {s=0} s && $3==f {print $1; exit}')
  if [ -z "$dir" ] || [ -z "$sha" ]; then
    log "no Sources record lists $file for $pkg $version"; return 1
  fi
  # apt-get source fetches the package as Debian publishes it; where the archive lacks the .dsc
  # (trixie's lammps at times) the orig tarball itself is fetched from the pool.
  local tmp="$CACHE/src/fetch-$pkg"
  rm -rf "$tmp" && mkdir -p "$tmp"
  log "apt-get source --download-only $pkg=$version"
  if (cd "$tmp" && apt-get "${APT_OPTS[@]}" source --download-only -qq "$pkg=$version" >/dev/null 2>&1) && [ -f "$tmp/$file" ]; then
    mv "$tmp/$file" "$dest.part"
  else
    log "apt-get source failed; fetching $MIRROR/$dir/$file"
    curl -fsSL --retry 3 -o "$dest.part" "$MIRROR/$dir/$file" || { log "download of $file failed"; rm -rf "$tmp"; return 1; }
  fi
  rm -rf "$tmp"
  if [ "$(sha256sum "$dest.part" | cut -d' ' -f1)" != "$sha" ]; then
    log "sha256 of $file does not match the Sources index ($sha)"; rm -f "$dest.part"; return 1
  fi
  mv "$dest.part" "$dest" && touch "$dest.ok"
}

# unpack TARBALL DEST [MEMBERS...]: extract into DEST, stripping the top-level folder where the
# tarball has one (sid's LAMMPS 2026 orig tarball has none).
unpack() {
  local tarball=$1 dest=$2; shift 2
  [ -f "$dest/.unpacked" ] && return 0
  rm -rf "$dest" && mkdir -p "$dest"
  local strip=1
  # `|| true`: head closes the pipe early, which tar reports as a failure under pipefail; awk
  # reads to the end, so that nothing else in the pipe stops early.
  if (tar -tf "$tarball" 2>/dev/null || true) | head -50 | awk '!/\// {top = 1} END {exit !top}'; then strip=0; fi
  tar -xf "$tarball" -C "$dest" --strip-components=$strip --wildcards "$@"
  touch "$dest/.unpacked"
}

# ---------------------------------------------------------------------------------------------
# Kokkos 3.4.01 (packages/kokkos of bookworm's trilinos 13.2.0), OpenMP + Serial, shared, PIC.
# Threaded Kokkos lets the tests run `-k on t 2` and so catch races that Serial would hide.
KOKKOS_KEY=kokkos-3.4.01-openmp-serial-cxx17
KOKKOS_PREFIX="$CACHE/$KOKKOS_KEY"
build_kokkos() {
  [ -f "$KOKKOS_PREFIX/.built" ] && return 0
  fetch_orig trilinos 13.2.0-4 trilinos_13.2.0.orig.tar.gz
  local src="$CACHE/src/trilinos-kokkos"
  unpack "$CACHE/src/trilinos_13.2.0.orig.tar.gz" "$src" '*/packages/kokkos/*'
  log "build Kokkos -> $KOKKOS_PREFIX"
  rm -rf "$CACHE/build-$KOKKOS_KEY"
  cmake -S "$src/packages/kokkos" -B "$CACHE/build-$KOKKOS_KEY" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$KOKKOS_PREFIX" \
    -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF >/dev/null
  cmake --build "$CACHE/build-$KOKKOS_KEY" -j "$JOBS" >/dev/null
  cmake --install "$CACHE/build-$KOKKOS_KEY" >/dev/null
  rm -rf "$CACHE/build-$KOKKOS_KEY"
  touch "$KOKKOS_PREFIX/.built"
}

# ---------------------------------------------------------------------------------------------
# LAMMPS: the source tree stays in the cache (the plugin compiles against its headers) beside
# the build tree (liblammps.so, lmp, and the generated headers).
# shellcheck source=lammps_options.sh
source "$(dirname "${BASH_SOURCE[0]}")/lammps_options.sh"
# build_lammps KEY SRC_TARBALL [CMAKE ARGS...]
build_lammps() {
  local key=$1 tarball=$2; shift 2
  local root="$CACHE/$key"
  [ -f "$root/build/.built" ] && return 0
  unpack "$tarball" "$root/source"
  log "build $key (several minutes)"
  rm -rf "$root/build"
  cmake -S "$root/source/cmake" -B "$root/build" -G Ninja "${LAMMPS_COMMON[@]}" "$@" > "$root/configure.log"
  cmake --build "$root/build" -j "$JOBS" > "$root/build.log" || { tail -30 "$root/build.log"; return 1; }
  touch "$root/build/.built"
}

# ---------------------------------------------------------------------------------------------
# Python environments, from the package index pip is configured with (its default unless the
# machine's pip configuration says otherwise). The key names the interpreter and every pinned
# version, so a change of either builds a new environment beside the old one.
#   base: torch (the default x86-64 wheel, CUDA included: about 6 GB; the index has no CPU-only
#         one) + nvalchemi-toolkit + aimnet (nvalchemi's AIMNet2 wrapper needs it).
#   mace: mace-torch pins e3nn 0.4.4, which clashes with other e3nn users of the base, so it
#         lives in its own venv that sees the base's packages (torch above all) through a .pth
#         file: about 0.3 GB more instead of a second torch.
#   sevenn: sevenn (SevenNet-0's weights inside) wants e3nn >= 0.5, which clashes with MACE's:
#         a third venv layered on the base the same way (about 0.4 GB; the wheel is GPL-3.0,
#         and the models made from it are made at test time, never kept in the repository).
#   nequip: nequip and nequip-allegro want e3nn 0.6 (and lightning, hydra): a fourth venv
#         layered the same way (about 0.2 GB).
PIP_OPTS=(--no-input --disable-pip-version-check --no-cache-dir --progress-bar off)

# make_venv DIR LOG: a fresh venv at DIR with current pip and wheel.
make_venv() {
  local dir=$1 logf=$2
  rm -rf "$dir" "$dir.log"
  /usr/bin/python3 -m venv "$dir" > "$logf" 2>&1 || { cat "$logf"; log "python3 -m venv $dir failed"; return 1; }
  "$dir/bin/python" -m pip install "${PIP_OPTS[@]}" --upgrade pip wheel >> "$logf" 2>&1 ||
    { tail -20 "$logf"; log "pip could not upgrade pip and wheel in $dir (log: $logf)"; return 1; }
}
# pip_install DIR LOG REQS...: install REQS into the venv at DIR; a failure names the log.
pip_install() {
  local dir=$1 logf=$2; shift 2
  log "pip install $* -> $dir (minutes)"
  if ! "$dir/bin/python" -m pip install "${PIP_OPTS[@]}" "$@" >> "$logf" 2>&1; then
    tail -30 "$logf"
    log "pip install $* failed (log: $logf)"
    return 1
  fi
}
site_packages() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

# python_versions: the versions and cache keys of the environments. A function, run after the
# Debian packages are in (python3 reads the pins): the exporter's tested pins
# (tools/pyproject.toml, [tool.distspec.tested]) are the one place a version is written.
tested_pin() {
  /usr/bin/python3 - "$(dirname "${BASH_SOURCE[0]}")/../tools/pyproject.toml" "$1" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    print(tomllib.load(f)["tool"]["distspec"]["tested"][sys.argv[2]])
PY
}
python_versions() {
  PY_TORCH=$(tested_pin torch)
  PY_NVALCHEMI=$(tested_pin nvalchemi-toolkit)
  PY_AIMNET=$(tested_pin aimnet)
  PY_MACE=$(tested_pin mace-torch)
  PY_CUEQ=$(tested_pin cuequivariance-torch)
  PY_BASE_REQS=("torch==$PY_TORCH" "nvalchemi-toolkit==$PY_NVALCHEMI" "aimnet==$PY_AIMNET")
  PY_MACE_REQS=("mace-torch==$PY_MACE" "cuequivariance-torch==$PY_CUEQ")
  PY_SEVENN=$(tested_pin sevenn)
  PY_SEVENN_REQS=("sevenn==$PY_SEVENN")
  PY_VERSION=$(/usr/bin/python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true)
  PY_BASE_KEY=pyenv-py$PY_VERSION-torch$PY_TORCH-nvalchemi$PY_NVALCHEMI-aimnet$PY_AIMNET
  PY_MACE_KEY=$PY_BASE_KEY+mace$PY_MACE-cueq$PY_CUEQ
  PY_SEVENN_KEY=$PY_BASE_KEY+sevenn$PY_SEVENN
  PY_NEQUIP=$(tested_pin nequip)
  PY_ALLEGRO=$(tested_pin nequip-allegro)
  PY_NEQUIP_REQS=("nequip==$PY_NEQUIP" "nequip-allegro==$PY_ALLEGRO")
  PY_NEQUIP_KEY=$PY_BASE_KEY+nequip$PY_NEQUIP-allegro$PY_ALLEGRO
}
# build_layer KEY CHECK REQS...: a venv at $CACHE/KEY that sees the base's packages, with REQS;
# CHECK (Python) must import what the layer is for.
build_layer() {
  local base="$CACHE/$PY_BASE_KEY" dir="$CACHE/$1" check=$2
  shift 2
  [ -f "$dir/.built" ] && return 0
  log "Python environment $dir (on top of $base)"
  make_venv "$dir" "$dir.log" || return 1
  # site.addsitedir (not a bare path line) so the base's own .pth files are processed too.
  printf 'import site; site.addsitedir(%s)\n' "'$(site_packages "$base")'" > "$(site_packages "$dir")/distspec-base-env.pth"
  pip_install "$dir" "$dir.log" "$@" || return 1
  # The layer must use the base's torch, not a second copy that pip pulled in.
  TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 "$dir/bin/python" -c "import sys, torch
$check
assert torch.__file__.startswith(sys.argv[1]), torch.__file__" "$(site_packages "$base")" >> "$dir.log" 2>&1 ||
    { tail -20 "$dir.log"; log "the environment $dir cannot import what it is for, or has its own torch (log: $dir.log)"; return 1; }
  touch "$dir/.built"
}
build_python_env() {
  local base="$CACHE/$PY_BASE_KEY"
  [ -f "$base/.built" ] && [ -f "$CACHE/$PY_MACE_KEY/.built" ] && [ -f "$CACHE/$PY_SEVENN_KEY/.built" ] &&
    [ -f "$CACHE/$PY_NEQUIP_KEY/.built" ] && return 0
  [ -n "$PY_VERSION" ] || { log "no /usr/bin/python3"; return 1; }
  local t0=$SECONDS
  if [ ! -f "$base/.built" ]; then
    log "Python environment $base"
    rm -rf "$CACHE/$PY_MACE_KEY" "$CACHE/$PY_SEVENN_KEY" "$CACHE/$PY_NEQUIP_KEY"  # layered on the base: rebuilt with it
    make_venv "$base" "$base.log" || return 1
    pip_install "$base" "$base.log" "${PY_BASE_REQS[@]}" || return 1
    "$base/bin/python" -c 'import torch, nvalchemi.distributed.spec, aimnet' >> "$base.log" 2>&1 ||
      { tail -20 "$base.log"; log "the new environment cannot import torch, nvalchemi or aimnet (log: $base.log)"; return 1; }
    touch "$base/.built"
  fi
  build_layer "$PY_MACE_KEY" "import mace.modules, nvalchemi.models.mace" "${PY_MACE_REQS[@]}" || return 1
  build_layer "$PY_SEVENN_KEY" "import sevenn.calculator, sevenn.util" "${PY_SEVENN_REQS[@]}" || return 1
  build_layer "$PY_NEQUIP_KEY" "import nequip.model, allegro.model" "${PY_NEQUIP_REQS[@]}" || return 1
  log "Python environments ready ($(( SECONDS - t0 )) s)"
}
python_env_lines() {
  if [ "${DISTSPEC_SKIP_PYTHON:-0}" = 1 ]; then
    echo "unset DISTSPEC_PYTHON DISTSPEC_PYTHON_MACE DISTSPEC_PYTHON_SEVENN DISTSPEC_PYTHON_NEQUIP"
  else
    echo "export DISTSPEC_PYTHON='$CACHE/$PY_BASE_KEY/bin/python'"
    echo "export DISTSPEC_PYTHON_MACE='$CACHE/$PY_MACE_KEY/bin/python'"
    echo "export DISTSPEC_PYTHON_SEVENN='$CACHE/$PY_SEVENN_KEY/bin/python'"
    echo "export DISTSPEC_PYTHON_NEQUIP='$CACHE/$PY_NEQUIP_KEY/bin/python'"
  fi
}
python_stage() {
  [ "${DISTSPEC_SKIP_PYTHON:-0}" = 1 ] && { log "DISTSPEC_SKIP_PYTHON=1: no Python environments"; return 0; }
  build_python_env || { log "the Python environment stage failed"; exit 1; }
}

LAMMPS_2021_KEY=lammps-20210929u2-mpi-kokkos-omp-plugin-manybody-kspace-molecule-replica
LAMMPS_2025_KEY=lammps-20250204-mpi-plugin-manybody-kspace-molecule-replica-extrapair
LAMMPS_2026_KEY=lammps-20260704-mpi-plugin-manybody-kspace-molecule-replica-extrapair
main() {
  if [ "${1:-}" = python ]; then
    install_packages
    python_versions
    python_stage
    local envf="$CACHE/env.sh" tmp="$CACHE/env.sh.tmp"
    : > "$tmp"
    if [ -f "$envf" ]; then grep -v 'DISTSPEC_PYTHON' "$envf" > "$tmp" || true; fi
    python_env_lines >> "$tmp"
    mv "$tmp" "$envf"
    log "ready: $envf"
    return 0
  fi
  install_packages
  python_versions
  build_kokkos
  fetch_orig lammps 20220106.git7586adbb6a+ds1-2 lammps_20220106.git7586adbb6a+ds1.orig.tar.xz
  build_lammps "$LAMMPS_2021_KEY" "$CACHE/src/lammps_20220106.git7586adbb6a+ds1.orig.tar.xz" \
    -DPKG_KOKKOS=ON -DEXTERNAL_KOKKOS=ON -DKokkos_DIR="$KOKKOS_PREFIX/lib/cmake/Kokkos" -DBUILD_OMP=ON
  local have_2025=0
  if fetch_orig lammps 20250204+dfsg.1-2 lammps_20250204+dfsg.1.orig.tar.xz; then
    build_lammps "$LAMMPS_2025_KEY" "$CACHE/src/lammps_20250204+dfsg.1.orig.tar.xz" -DBUILD_OMP=OFF -DPKG_EXTRA-PAIR=ON
    have_2025=1
  else
    log "LAMMPS 4 Feb 2025 source tarball not available from the Debian archive: continuing with LAMMPS 29 Sep 2021 only"
  fi
  local have_2026=0
  if [ "${DISTSPEC_WITH_LAMMPS_2026:-1}" = 0 ]; then
    :
  elif fetch_orig lammps 20260704+dfsg-2 lammps_20260704+dfsg.orig.tar.gz; then
    build_lammps "$LAMMPS_2026_KEY" "$CACHE/src/lammps_20260704+dfsg.orig.tar.gz" -DBUILD_OMP=OFF -DPKG_EXTRA-PAIR=ON
    have_2026=1
  else
    log "LAMMPS 4 Jul 2026 source tarball not available from the Debian archive: continuing without it"
  fi
  python_stage
  {
    echo "export DISTSPEC_CACHE='$CACHE'"
    echo "export DISTSPEC_KOKKOS_DIR='$KOKKOS_PREFIX/lib/cmake/Kokkos'"
    echo "export DISTSPEC_LAMMPS_2021='$CACHE/$LAMMPS_2021_KEY'"
    if [ $have_2025 = 1 ]; then echo "export DISTSPEC_LAMMPS_2025='$CACHE/$LAMMPS_2025_KEY'"
    else echo "unset DISTSPEC_LAMMPS_2025"; fi
    if [ $have_2026 = 1 ]; then echo "export DISTSPEC_LAMMPS_2026='$CACHE/$LAMMPS_2026_KEY'"
    else echo "unset DISTSPEC_LAMMPS_2026"; fi
    python_env_lines
  } > "$CACHE/env.sh"
  log "ready: $CACHE/env.sh"
}
main "$@"
