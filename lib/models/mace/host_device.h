// DISTSPEC_MACE_HD marks what both the CPU kernels and the CUDA kernels of lib/models/mace call
// (__host__ __device__ under nvcc, nothing for the host compiler).
#pragma once

#ifndef DISTSPEC_MACE_HD
#if defined(__CUDACC__)
#define DISTSPEC_MACE_HD __host__ __device__
#else
#define DISTSPEC_MACE_HD
#endif
#endif
