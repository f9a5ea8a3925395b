// libdistspec_mace_ops.so: MACE's kernels as torch ops in the namespace distspec_mace
// (doc/mace_kernels.md). Each op file registers its own ops with TORCH_LIBRARY_FRAGMENT, whose
// static registrars run when the library loads (dlopen from pair_style distspec, or
// torch.ops.load_library from distspec-export). This file names the namespace once, so that the
// library registers it even before any op file is added, and answers what version of the kernels
// a graph was traced against.
#include <torch/library.h>

namespace {

// Bumped whenever an op's schema or its semantics change: the exporter records it in the model
// file's parameters, and the plugin compares.
constexpr int64_t kKernelsVersion = 1;

int64_t kernels_version() { return kKernelsVersion; }

}  // namespace

TORCH_LIBRARY_FRAGMENT(distspec_mace, m) {
  m.def("kernels_version() -> int", &kernels_version);
}
