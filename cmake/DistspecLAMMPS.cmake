# Locates a LAMMPS source tree and its CMake build tree, and describes them as the imported
# targets the plugin and the integration tests compile against:
#   distspec::lammps_headers  headers + the compile definitions that change LAMMPS' ABI
#   distspec::lammps          the above plus liblammps (for tests that drive LAMMPS as a library)
# Sets LAMMPS_VERSION_NUMBER (e.g. 20210929) from version.h and DISTSPEC_LAMMPS_HAS_KOKKOS.
#
# Inputs: LAMMPS_SOURCE_DIR (the tree holding src/version.h) and LAMMPS_BUILD_DIR (holding
# CMakeCache.txt and liblammps.so). A plugin must be compiled against the exact headers and
# options of the LAMMPS that loads it: LAMMPS only logs a version mismatch.

set(LAMMPS_SOURCE_DIR "$ENV{DISTSPEC_LAMMPS}/source" CACHE PATH "LAMMPS source tree (contains src/version.h)")
set(LAMMPS_BUILD_DIR "$ENV{DISTSPEC_LAMMPS}/build" CACHE PATH "LAMMPS CMake build tree (contains CMakeCache.txt)")

if(NOT EXISTS "${LAMMPS_SOURCE_DIR}/src/version.h")
  message(FATAL_ERROR "LAMMPS_SOURCE_DIR='${LAMMPS_SOURCE_DIR}' has no src/version.h. Pass -DLAMMPS_SOURCE_DIR=<lammps> "
                      "and -DLAMMPS_BUILD_DIR=<its cmake build>, or run scripts/bootstrap.sh and source ~/.cache/distspec/env.sh.")
endif()
if(NOT EXISTS "${LAMMPS_BUILD_DIR}/CMakeCache.txt")
  message(FATAL_ERROR "LAMMPS_BUILD_DIR='${LAMMPS_BUILD_DIR}' is not a LAMMPS CMake build tree (no CMakeCache.txt).")
endif()

# LAMMPS_VERSION "29 Sep 2021" -> 20210929
file(STRINGS "${LAMMPS_SOURCE_DIR}/src/version.h" _version_line REGEX "define LAMMPS_VERSION ")
string(REGEX MATCH "\"([0-9]+) ([A-Za-z]+) ([0-9]+)\"" _m "${_version_line}")
set(_months Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec)
list(FIND _months "${CMAKE_MATCH_2}" _month_index)
if(_month_index LESS 0)
  message(FATAL_ERROR "cannot read the LAMMPS version from ${LAMMPS_SOURCE_DIR}/src/version.h: '${_version_line}'")
endif()
math(EXPR _month "${_month_index} + 1")
math(EXPR LAMMPS_VERSION_NUMBER "${CMAKE_MATCH_3} * 10000 + ${_month} * 100 + ${CMAKE_MATCH_1}")
message(STATUS "LAMMPS ${CMAKE_MATCH_1} ${CMAKE_MATCH_2} ${CMAKE_MATCH_3} (${LAMMPS_VERSION_NUMBER}) at ${LAMMPS_SOURCE_DIR}")

# The options of the LAMMPS build that change what its headers declare.
load_cache("${LAMMPS_BUILD_DIR}" READ_WITH_PREFIX LMP_
           LAMMPS_SIZES LAMMPS_EXCEPTIONS BUILD_MPI PKG_KOKKOS PKG_PLUGIN Kokkos_DIR LAMMPS_MEMALIGN)
if(NOT LMP_PKG_PLUGIN)
  message(FATAL_ERROR "the LAMMPS build at ${LAMMPS_BUILD_DIR} lacks the PLUGIN package; reconfigure it with -DPKG_PLUGIN=on")
endif()
if(NOT LMP_LAMMPS_SIZES)
  set(LMP_LAMMPS_SIZES smallbig)
endif()
string(TOUPPER "${LMP_LAMMPS_SIZES}" _sizes)
if(NOT LMP_LAMMPS_MEMALIGN)
  set(LMP_LAMMPS_MEMALIGN 64)
endif()

add_library(distspec_lammps_headers INTERFACE)
add_library(distspec::lammps_headers ALIAS distspec_lammps_headers)
target_include_directories(distspec_lammps_headers SYSTEM INTERFACE
  "${LAMMPS_SOURCE_DIR}/src" "${LAMMPS_BUILD_DIR}/styles")
target_compile_definitions(distspec_lammps_headers INTERFACE
  LAMMPS_${_sizes} LAMMPS_MEMALIGN=${LMP_LAMMPS_MEMALIGN} LMP_PLUGIN LAMMPS_VERSION_NUMBER=${LAMMPS_VERSION_NUMBER})
# LAMMPS 4 Jul 2026 ships its own nlohmann/json.hpp in src/ (renamed to namespace nlohmann_lmp,
# behind an #error unless its json.h includes it). src/ is on the plugin's include path, so the
# plugin's `#include <nlohmann/json.hpp>` would find that copy: a folder of forwarding headers,
# searched first, sends it to the nlohmann_json the project was configured with.
if(EXISTS "${LAMMPS_SOURCE_DIR}/src/nlohmann/json.hpp")
  get_target_property(_json_includes nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
  find_file(_json_hpp nlohmann/json.hpp PATHS ${_json_includes} /usr/include NO_DEFAULT_PATH REQUIRED)
  get_filename_component(_json_dir "${_json_hpp}" DIRECTORY)
  set(_json_shim "${PROJECT_BINARY_DIR}/lammps-json-shim")
  foreach(_header json.hpp json_fwd.hpp)
    file(WRITE "${_json_shim}/nlohmann/${_header}" "#include \"${_json_dir}/${_header}\"\n")
  endforeach()
  target_include_directories(distspec_lammps_headers SYSTEM BEFORE INTERFACE "${_json_shim}")
endif()

# Pair::finish(), which Finish calls after a run (newer than 29 Sep 2021), is read
# from pair.h rather than pinned to a release date; lammps_compat.h turns it into one macro.
file(STRINGS "${LAMMPS_SOURCE_DIR}/src/pair.h" _pair_finish REGEX "virtual void finish\\(\\)")
set(DISTSPEC_LAMMPS_PAIR_FINISH OFF)
if(_pair_finish)
  set(DISTSPEC_LAMMPS_PAIR_FINISH ON)
  target_compile_definitions(distspec_lammps_headers INTERFACE DISTSPEC_LAMMPS_PAIR_FINISH=1)
endif()
if(LMP_LAMMPS_EXCEPTIONS OR LAMMPS_VERSION_NUMBER GREATER_EQUAL 20230208)
  target_compile_definitions(distspec_lammps_headers INTERFACE LAMMPS_EXCEPTIONS)
endif()

if(LMP_BUILD_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
  target_link_libraries(distspec_lammps_headers INTERFACE MPI::MPI_CXX)
  target_compile_definitions(distspec_lammps_headers INTERFACE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
else()
  target_include_directories(distspec_lammps_headers SYSTEM INTERFACE "${LAMMPS_SOURCE_DIR}/src/STUBS")
endif()
set(DISTSPEC_LAMMPS_HAS_MPI ${LMP_BUILD_MPI})

set(DISTSPEC_LAMMPS_HAS_KOKKOS OFF)
if(LMP_PKG_KOKKOS)
  if(LMP_Kokkos_DIR)
    set(Kokkos_DIR "${LMP_Kokkos_DIR}")
  endif()
  find_package(Kokkos REQUIRED)
  target_include_directories(distspec_lammps_headers SYSTEM INTERFACE "${LAMMPS_SOURCE_DIR}/src/KOKKOS")
  target_compile_definitions(distspec_lammps_headers INTERFACE LMP_KOKKOS)
  target_link_libraries(distspec_lammps_headers INTERFACE Kokkos::kokkos)
  set(DISTSPEC_LAMMPS_HAS_KOKKOS ON)
endif()

# A build folder reconfigured against another LAMMPS must not keep the old one's library and
# executable from the cache (they would link and run silently).
foreach(_cached LAMMPS_LIBRARY LAMMPS_EXECUTABLE DISTSPEC_LMP)
  if(${_cached})
    get_filename_component(_cached_dir "${${_cached}}" DIRECTORY)
    get_filename_component(_build_dir "${LAMMPS_BUILD_DIR}" REALPATH)
    get_filename_component(_cached_dir "${_cached_dir}" REALPATH)
    if(NOT _cached_dir STREQUAL _build_dir)
      unset(${_cached} CACHE)
    endif()
  endif()
endforeach()
find_library(LAMMPS_LIBRARY NAMES lammps lammps_mpi lammps_serial PATHS "${LAMMPS_BUILD_DIR}" NO_DEFAULT_PATH)
find_program(LAMMPS_EXECUTABLE NAMES lmp lmp_mpi lmp_serial PATHS "${LAMMPS_BUILD_DIR}" NO_DEFAULT_PATH)
add_library(distspec_lammps INTERFACE)
add_library(distspec::lammps ALIAS distspec_lammps)
target_link_libraries(distspec_lammps INTERFACE distspec_lammps_headers)
if(LAMMPS_LIBRARY)
  target_link_libraries(distspec_lammps INTERFACE "${LAMMPS_LIBRARY}")
endif()
