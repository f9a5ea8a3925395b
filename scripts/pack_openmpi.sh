# shellcheck shell=bash
# Sourced by the GPU packing scripts: Debian's OpenMPI runtime (libraries, MCA and PMIx
# components, help files, mpirun) and its headers, relocated under one folder for a machine that
# has no MPI, with an env.sh that points OpenMPI's install-prefix variables there.
#   pack_openmpi OUT     OUT/{usr,pmix2,include,lib} and OUT/env.sh
#   pack_libraries OUT FILES...   copies into OUT/lib every shared library FILES load, but the C library
pack_libraries() {
  local out=$1; shift
  {
    for f in "$@"; do LD_LIBRARY_PATH="$out/lib" ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}'; done
  } | sort -u | while read -r lib; do
    case $(basename "$lib") in
      # The machine's own C library is newer than Debian 12's; libmpi.so is packed by name.
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*) continue ;;
    esac
    [ -e "$out/lib/$(basename "$lib")" ] || cp -L "$lib" "$out/lib/"
  done
}

pack_openmpi() {
  local out=$1
  local ompi=/usr/lib/x86_64-linux-gnu/openmpi pmix=/usr/lib/x86_64-linux-gnu/pmix2
  mkdir -p "$out"/{bin,lib,include} "$out/usr/bin" "$out/usr/lib/x86_64-linux-gnu/openmpi/lib" "$out/usr/share" \
           "$out/pmix2/lib" "$out/pmix2/share"
  # In the layout their install-prefix variables (OPAL_PREFIX, PMIX_INSTALL_PREFIX) relocate:
  # components, help texts, launcher.
  cp -a "$ompi/lib/openmpi3" "$out/usr/lib/x86_64-linux-gnu/openmpi/lib/"
  cp -a /usr/share/openmpi "$out/usr/share/"
  cp -L /usr/bin/orterun /usr/bin/orted "$out/usr/bin/"
  ln -sf orterun "$out/usr/bin/mpirun"
  cp -a "$pmix/lib/pmix" "$out/pmix2/lib/"
  cp -a "$pmix/share/pmix" "$out/pmix2/share/"
  # Headers and the library itself, for building against it (FindMPI without a compiler wrapper).
  cp -a "$ompi/include/." "$out/include/"
  cp -L "$ompi/lib/libmpi.so" "$out/lib/"
  pack_libraries "$out" "$out"/lib/libmpi.so "$out"/usr/bin/orte* "$out"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so \
                 "$out"/pmix2/lib/pmix/*.so
  cat > "$out/env.sh" <<'ENV'
# Sourced on the GPU machine: the packed OpenMPI (and LAMMPS, DISTSPEC where packed) come first.
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
# FindMPI's inputs for a build against the packed OpenMPI: no compiler wrapper, no pkg-config.
DISTSPEC_MPI_CMAKE_ARGS=(-DPKG_CONFIG_EXECUTABLE=/bin/false -DMPI_SKIP_COMPILER_WRAPPER=ON
  -DMPI_C_HEADER_DIR="$distspec_run/include" -DMPI_CXX_HEADER_DIR="$distspec_run/include"
  -DMPI_C_LIB_NAMES=mpi -DMPI_CXX_LIB_NAMES=mpi -DMPI_mpi_LIBRARY="$distspec_run/lib/libmpi.so"
  -DMPI_CXX_SKIP_MPICXX=ON -DMPIEXEC_EXECUTABLE="$distspec_run/usr/bin/mpirun"
  -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$distspec_run/lib" -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$distspec_run/lib")
ENV
}
