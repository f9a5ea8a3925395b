# Sourced by the build scripts: compiles go through ccache where it is installed (the bootstrap
# installs it), with its cache outside the repository, beside the LAMMPS builds. Paths under the
# clone are hashed relative to it, so a fresh clone elsewhere hits the same entries. CMake reads
# the *_COMPILER_LAUNCHER variables when it first configures a build folder.
if command -v ccache >/dev/null 2>&1 && [ "${DISTSPEC_CCACHE:-1}" != 0 ]; then
  export CCACHE_DIR=${CCACHE_DIR:-${DISTSPEC_CACHE:-$HOME/.cache/distspec}/ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  # Sanitized and instrumented builds differ only by flags, which ccache hashes.
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
fi
