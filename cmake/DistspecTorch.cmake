# Finds LibTorch for the torch model kind (lib/models/torch) and sets DISTSPEC_ENABLE_TORCH.
#
# LibTorch comes from the torch wheel of the bootstrap's Python environment: `Torch_DIR`, or
# else `${DISTSPEC_PYTHON} -c 'import torch; print(torch.utils.cmake_prefix_path)'`.
# DISTSPEC_ENABLE_TORCH defaults to ON when LibTorch is found (OFF under DISTSPEC_SANITIZE:
# libtorch is not instrumented, and the sanitized suites test the code that does not need it).
#
# Defines, when enabled:
#   distspec_torch_flags   an INTERFACE target that links LibTorch (C++20) into the few files
#                          that include torch headers; nothing else is compiled as C++20
#   DISTSPEC_TORCH_RPATH_LINK   the folders of the wheel's libraries that ld must see when it
#                          links an executable against libtorch_cuda (else it takes the machine's
#                          older NCCL and fails); lib/models adds them to everything linking it

set(DISTSPEC_PYTHON "$ENV{DISTSPEC_PYTHON}" CACHE FILEPATH
    "Python of the environment with torch and nvalchemi-toolkit (scripts/bootstrap.sh)")

if(NOT Torch_DIR AND DISTSPEC_PYTHON AND NOT DISTSPEC_SANITIZE)
  execute_process(COMMAND "${DISTSPEC_PYTHON}" -c "import torch; print(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _torch_rc ERROR_QUIET)
  if(_torch_rc EQUAL 0 AND EXISTS "${_torch_prefix}/Torch/TorchConfig.cmake")
    set(Torch_DIR "${_torch_prefix}/Torch" CACHE PATH "LibTorch's CMake package (torch.utils.cmake_prefix_path/Torch)")
  endif()
endif()

set(_torch_default OFF)
if(Torch_DIR AND NOT DISTSPEC_SANITIZE)
  set(_torch_default ON)
endif()
option(DISTSPEC_ENABLE_TORCH "Build the torch model kind (on when LibTorch is found)" ${_torch_default})
if(NOT DISTSPEC_ENABLE_TORCH)
  message(STATUS "DISTSPEC torch model kind: off (no LibTorch: set DISTSPEC_PYTHON or Torch_DIR)")
  return()
endif()

# In a function: TorchConfig appends its own CUDA architectures and defines to CMAKE_CUDA_FLAGS
# of the scope it runs in, which must not reach the project's own CUDA kernels. Its imported
# targets are directory-wide regardless.
function(_distspec_find_torch)
  find_package(Torch REQUIRED)
  set(Torch_VERSION "${Torch_VERSION}" PARENT_SCOPE)
  set(TORCH_INSTALL_PREFIX "${TORCH_INSTALL_PREFIX}" PARENT_SCOPE)
endfunction()
_distspec_find_torch()
message(STATUS "DISTSPEC torch model kind: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

add_library(distspec_torch_flags INTERFACE)
# The C++ standard is the one LibTorch's own config asks for (C++20 from torch 2.15 on, C++17
# before): a fixed one here would clash with a C++17 Kokkos under nvcc_wrapper and an older torch.
target_link_libraries(distspec_torch_flags INTERFACE torch)

# The wheel's own libraries that libtorch_cuda needs, for ld's resolution at link time (at run
# time the wheel's RPATHs already win).
set(DISTSPEC_TORCH_RPATH_LINK "${TORCH_INSTALL_PREFIX}/lib")
file(GLOB _torch_nvidia_libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
list(APPEND DISTSPEC_TORCH_RPATH_LINK ${_torch_nvidia_libs})
