# Included into LAMMPS' own configuration by scripts/gpu_build_kokkos.sh (CMAKE_PROJECT_INCLUDE):
# CMake's CUDA targets (CUDA::cudart, CUDA::cuda_driver and what CMake 4 links them through) exist
# before Kokkos 3.4's exported configuration is read, so that it does not define stand-ins for
# them that lack CMake 4's internal dependencies.
find_package(CUDAToolkit REQUIRED)
