#!/usr/bin/env bash
# Packs what a GPU machine without LAMMPS, MPI or Debian packages needs to run DISTSPEC's GPU
# tests and benchmarks under MPI: the LAMMPS 4 Feb 2025 build (lmp, liblammps), the plugin and
# test/benchmark binaries of a CUDA build, and Debian's OpenMPI runtime (libraries, MCA and PMIx
# components, help files, mpirun) relocated under one folder.
#   scripts/pack_gpu_run.sh [BUILD_DIR] [OUT_DIR]
#     BUILD_DIR  a DISTSPEC build against LAMMPS 2025 with CUDA (default build/lammps-20250204)
#     OUT_DIR    default build-gpu-run
# On the GPU machine: `source OUT_DIR/env.sh`, then mpirun, lmp and the test binaries run as here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build/lammps-20250204}")
out=$(realpath -m "${2:-$root/build-gpu-run}")
# shellcheck source=/dev/null
source "${DISTSPEC_CACHE:-$HOME/.cache/distspec}/env.sh"
lammps=$DISTSPEC_LAMMPS_2025/build
grep -q "DISTSPEC_ENABLE_CUDA:BOOL=ON" "$build/CMakeCache.txt" ||
  { echo "pack_gpu_run: $build is not a CUDA build (configure with -DDISTSPEC_ENABLE_CUDA=ON)" >&2; exit 1; }

ompi_lib=/usr/lib/x86_64-linux-gnu/openmpi/lib
pmix=/usr/lib/x86_64-linux-gnu/pmix2
rm -rf "$out"
mkdir -p "$out"/{bin,lib} "$out/usr/bin" "$out/usr/lib/x86_64-linux-gnu/openmpi/lib" "$out/usr/share" "$out/pmix2/lib" "$out/pmix2/share"

# DISTSPEC and LAMMPS.
cp "$lammps/lmp" "$out/bin/"
cp -L "$lammps/liblammps.so.0" "$out/lib/"
cp -L "$build/libdistspec.so" "$out/lib/"
for exe in unittest/integration/distspec_integration_tests unittest/gpu/distspec_gpu_tests bench/gpu/bench_gpu_models; do
  [ -f "$build/$exe" ] && cp "$build/$exe" "$out/bin/"
done

# OpenMPI and PMIx, in the layout their install-prefix variables (OPAL_PREFIX, PMIX_INSTALL_PREFIX)
# relocate: components, help texts, launcher.
cp -a "$ompi_lib/openmpi3" "$out/usr/lib/x86_64-linux-gnu/openmpi/lib/"
cp -a /usr/share/openmpi "$out/usr/share/"
cp -L /usr/bin/orterun /usr/bin/orted "$out/usr/bin/"
ln -s orterun "$out/usr/bin/mpirun"
cp -a "$pmix/lib/pmix" "$out/pmix2/lib/"
cp -a "$pmix/share/pmix" "$out/pmix2/share/"

# Every shared library these load, except the C library itself (the machine's own is newer).
{
  for f in "$out"/bin/* "$out"/lib/*.so* "$out"/usr/bin/orte* "$out"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so \
           "$out"/pmix2/lib/pmix/*.so; do
    LD_LIBRARY_PATH="$out/lib" ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
  done
} | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*) continue ;;
  esac
  [ -e "$out/lib/$(basename "$lib")" ] || cp -L "$lib" "$out/lib/"
done

cat > "$out/env.sh" <<'EOF'
# Sourced on the GPU machine: the packed LAMMPS, DISTSPEC and OpenMPI come first.
distspec_run=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$distspec_run/usr/bin:$distspec_run/bin:$PATH"
export LD_LIBRARY_PATH="$distspec_run/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$distspec_run/usr" PMIX_INSTALL_PREFIX="$distspec_run/pmix2"
export OMPI_MCA_mca_base_component_path="$distspec_run/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3"
export PMIX_MCA_mca_base_component_path="$distspec_run/pmix2/lib/pmix"
# One node, shared memory: no network transports to probe; containers often forbid the
# cross-memory-attach single copy.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_osc=^ucx OMPI_MCA_coll_hcoll_enable=0
# PMIx's zlib compression component does not load here, and says so on every launch, naming its
# path on this machine: leave it out, and its warning that nothing compresses.
export PMIX_MCA_pcompress=^zlib PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export DISTSPEC_PLUGIN="$distspec_run/lib/libdistspec.so"
EOF
du -sh "$out"
