# The layer rules of DESIGN.md, enforced by the build:
#   lib/distspec  (framework-generic core) includes only distspec/... and system headers;
#   lib/models    (kernels) includes distspec/... and models/..., never src/DISTSPEC or LAMMPS.
# Two mechanisms. Each library gets an include root of its own in the build tree that holds
# only its folder (a symbolic link), so `#include "models/..."` in the core finds nothing; and
# a check run before either library compiles (cmake/CheckLayers.cmake) rejects what an include
# root cannot stop: a path out of the folder ("../models/..."), or a quoted header of no layer
# ("pair.h" of LAMMPS).

include_guard(GLOBAL)
# Cached: the function below runs in the scope of whichever folder calls it.
get_filename_component(_repo "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(DISTSPEC_REPO_DIR "${_repo}" CACHE INTERNAL "the DISTSPEC repository")
set(DISTSPEC_INCLUDE_ROOTS "${CMAKE_BINARY_DIR}/include-roots" CACHE INTERNAL "the layers' include roots")

# distspec_include_root(TARGET FOLDER): TARGET's public include root holds lib/FOLDER as FOLDER/.
function(distspec_include_root target folder)
  set(root "${DISTSPEC_INCLUDE_ROOTS}/${folder}")
  file(MAKE_DIRECTORY "${root}")
  if(NOT EXISTS "${root}/${folder}")
    file(CREATE_LINK "${DISTSPEC_REPO_DIR}/lib/${folder}" "${root}/${folder}" SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC "${root}")
endfunction()

# The source check, as a build step both libraries wait for.
file(GLOB_RECURSE _distspec_layer_sources CONFIGURE_DEPENDS
  "${DISTSPEC_REPO_DIR}/lib/*.h" "${DISTSPEC_REPO_DIR}/lib/*.cpp" "${DISTSPEC_REPO_DIR}/lib/*.cu"
  "${DISTSPEC_REPO_DIR}/lib/*.cuh")
add_custom_command(OUTPUT "${CMAKE_BINARY_DIR}/layers.checked"
  COMMAND "${CMAKE_COMMAND}" -DLIB_DIR="${DISTSPEC_REPO_DIR}/lib" -P "${DISTSPEC_REPO_DIR}/cmake/CheckLayers.cmake"
  COMMAND "${CMAKE_COMMAND}" -E touch "${CMAKE_BINARY_DIR}/layers.checked"
  DEPENDS ${_distspec_layer_sources} "${DISTSPEC_REPO_DIR}/cmake/CheckLayers.cmake"
  COMMENT "Checking the layer rules of lib/distspec and lib/models")
add_custom_target(distspec_layers DEPENDS "${CMAKE_BINARY_DIR}/layers.checked")
