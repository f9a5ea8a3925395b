#!/usr/bin/env bash
# Installs what DISTSPEC needs on Debian 12 and builds the two LAMMPS versions it supports,
# from Debian *source* packages, into a cache outside the repository.
#
#   A: LAMMPS 29 Sep 2021 Update 2 (bookworm lammps 20220106.git7586adbb6a+ds1-2), shared lib +
#      lmp, MPI, PLUGIN, KOKKOS (external Kokkos 3.4.01, OpenMP+Serial, built from bookworm's
#      trilinos source), MANYBODY, KSPACE, exceptions on.
#   B: LAMMPS 4 Feb 2025 (trixie lammps_20250204+dfsg.1.orig.tar.xz), CPU only.
#
# Idempotent: every stage leaves a stamp in its cache folder, whose name is keyed by version and
# options, so a warm machine skips straight through. Never touches the machine's apt sources:
# source indices come from a temporary list passed with -o options.
#
# Environment: DISTSPEC_CACHE (default ~/.cache/distspec), DISTSPEC_JOBS (default nproc),
#              DISTSPEC_SKIP_APT=1 to skip the apt-get install step.
# Output: $DISTSPEC_CACHE/env.sh, which exports the paths of the builds.
set -euo pipefail

CACHE=${DISTSPEC_CACHE:-$HOME/.cache/distspec}
JOBS=${DISTSPEC_JOBS:-$(nproc)}
mkdir -p "$CACHE/src"
log() { printf '[bootstrap] %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
# Debian packages
APT_PACKAGES=(build-essential cmake ninja-build pkg-config git ca-certificates curl xz-utils
              lz4 dpkg-dev openmpi-bin libopenmpi-dev nlohmann-json3-dev libgtest-dev
              python3 gnuplot-nox time clang llvm valgrind)
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
  printf 'deb-src %s bookworm main\ndeb-src %s trixie main\n' "$MIRROR" "$MIRROR" > "$SRCLIST_DIR/sources.list"
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

# unpack TARBALL DEST [MEMBERS...]: extract into DEST, stripping the top-level folder.
unpack() {
  local tarball=$1 dest=$2; shift 2
  [ -f "$dest/.unpacked" ] && return 0
  rm -rf "$dest" && mkdir -p "$dest"
  tar -xf "$tarball" -C "$dest" --strip-components=1 --wildcards "$@"
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
LAMMPS_COMMON=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DBUILD_MPI=ON -DLAMMPS_EXCEPTIONS=ON
               -DPKG_PLUGIN=ON -DPKG_MANYBODY=ON -DPKG_KSPACE=ON -DPKG_MOLECULE=ON -DFFT=KISS
               -DCMAKE_CXX_STANDARD=17 -DBUILD_TOOLS=OFF -DBUILD_DOC=OFF -DWITH_JPEG=OFF -DWITH_PNG=OFF
               -DWITH_GZIP=OFF -DWITH_FFMPEG=OFF)
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

LAMMPS_2021_KEY=lammps-20210929u2-mpi-kokkos-omp-plugin-manybody-kspace-molecule
LAMMPS_2025_KEY=lammps-20250204-mpi-plugin-manybody-kspace-molecule
main() {
  install_packages
  build_kokkos
  fetch_orig lammps 20220106.git7586adbb6a+ds1-2 lammps_20220106.git7586adbb6a+ds1.orig.tar.xz
  build_lammps "$LAMMPS_2021_KEY" "$CACHE/src/lammps_20220106.git7586adbb6a+ds1.orig.tar.xz" \
    -DPKG_KOKKOS=ON -DEXTERNAL_KOKKOS=ON -DKokkos_DIR="$KOKKOS_PREFIX/lib/cmake/Kokkos" -DBUILD_OMP=ON
  local have_2025=0
  if fetch_orig lammps 20250204+dfsg.1-2 lammps_20250204+dfsg.1.orig.tar.xz; then
    build_lammps "$LAMMPS_2025_KEY" "$CACHE/src/lammps_20250204+dfsg.1.orig.tar.xz" -DBUILD_OMP=OFF
    have_2025=1
  else
    log "LAMMPS 4 Feb 2025 source tarball not available from the Debian archive: continuing with LAMMPS 29 Sep 2021 only"
  fi
  {
    echo "export DISTSPEC_CACHE='$CACHE'"
    echo "export DISTSPEC_KOKKOS_DIR='$KOKKOS_PREFIX/lib/cmake/Kokkos'"
    echo "export DISTSPEC_LAMMPS_2021='$CACHE/$LAMMPS_2021_KEY'"
    if [ $have_2025 = 1 ]; then echo "export DISTSPEC_LAMMPS_2025='$CACHE/$LAMMPS_2025_KEY'"
    else echo "unset DISTSPEC_LAMMPS_2025"; fi
  } > "$CACHE/env.sh"
  log "ready: $CACHE/env.sh"
}
main "$@"
