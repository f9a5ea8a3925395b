// DISTSPEC_MACE_CPU_CLONES: a CPU kernel's hot loops compiled for AVX-512 and AVX2 beside the
// baseline, the best one chosen when the library loads (GCC's target_clones): the build targets
// any x86-64, and these loops are the whole cost of the MACE kernels on the CPU.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DISTSPEC_MACE_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DISTSPEC_MACE_CPU_CLONES
#endif
