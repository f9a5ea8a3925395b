# shellcheck shell=bash
# Sourced: the CMake options of every LAMMPS build this project makes (scripts/bootstrap.sh here,
# scripts/gpu_build.sh on a GPU machine), so that the plugin sees the same LAMMPS everywhere.
LAMMPS_COMMON=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DBUILD_MPI=ON -DLAMMPS_EXCEPTIONS=ON
               -DPKG_PLUGIN=ON -DPKG_MANYBODY=ON -DPKG_REPLICA=ON -DPKG_KSPACE=ON -DPKG_MOLECULE=ON -DFFT=KISS
               -DCMAKE_CXX_STANDARD=17 -DBUILD_TOOLS=OFF -DBUILD_DOC=OFF -DWITH_JPEG=OFF -DWITH_PNG=OFF
               -DWITH_GZIP=OFF -DWITH_FFMPEG=OFF)

# bundle_fftw_args BUNDLE: the plugin's CMake arguments for the FFTW3 a GPU bundle carries
# (scripts/pack_gpu_source.sh), into the array FFTW_ARGS; empty where the bundle has none.
bundle_fftw_args() {
  FFTW_ARGS=()
  [ -f "$1/fftw/include/fftw3.h" ] &&
    FFTW_ARGS=(-DDISTSPEC_FFTW_INCLUDE_DIR="$1/fftw/include" -DDISTSPEC_FFTW_LIBRARY="$1/fftw/lib/libfftw3.so")
  return 0
}
