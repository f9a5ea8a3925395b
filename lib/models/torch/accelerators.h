// Accelerators: libraries of equivariant tensor-product kernels whose ops an exported graph calls
// beside ATen and the halo ops (doc/torch_models.md, "Accelerators"). Their ops are opaque to
// the graph's runtime: the library that registers them with torch must be in the process before
// the graph loads (AOTInductor's proxy executor looks ops up by name when a package loads).
//
//   openequivariance  ops libtorch_tp_jit::* (jit_conv_*, jit_tp_*, group_gemm), registered in
//                     C++ by liboeq_stable_cuda_aoti.so (scripts/build_openequivariance.sh), which
//                     the plugin loads from $DISTSPEC_OPENEQUIVARIANCE_LIBRARY or the path the
//                     build was configured with (-DDISTSPEC_OPENEQUIVARIANCE_LIBRARY=...);
//   cuequivariance    ops cuequivariance::*, which cuEquivariance defines in Python only: no
//                     library here registers them, so a graph that calls them is refused;
//   mace-kernels      ops distspec_mace::*, DISTSPEC's own MACE kernels (doc/mace_kernels.md),
//                     registered by libdistspec_mace_ops.so, which this build puts beside the
//                     plugin; $DISTSPEC_MACE_OPS_LIBRARY names another copy.
//
// Loading is process-wide and happens once, as torch's op registry is process-wide.
#pragma once

#include <string>
#include <vector>

namespace distspec::models::torch_kind {

struct Accelerator {
  const char* name;         // as the model file's parameters.accelerator names it
  const char* display;      // as its project names it
  const char* op_namespace;
  const char* library_variable;  // environment variable (and CMake option) of its library; "" none
  const char* built_library;     // the path the build was configured with ("" none); the environment wins
  const char* beside_plugin;     // a file name looked for in the plugin's own folder ("" none), before built_library
  const char* how_to_get;   // what a user does to run graphs that call its ops
};

// The accelerator whose ops live in the namespace of `op` ("ns::name" or "ns::name.overload").
const Accelerator* accelerator_of_op(const std::string& op);
// The accelerator a model file names; nullptr for an unknown name.
const Accelerator* accelerator_named(const std::string& name);
std::vector<std::string> accelerator_names();

// Makes the ops of `accelerator` callable in this process (loads its library once), or throws a
// distspec::Error at `json_path` naming `op` (the first op of the graph that needs it), the
// graph, the accelerator and how to build with it.
void require_accelerator(const Accelerator& accelerator, const std::string& op, const std::string& graph,
                         const std::string& json_path);

// The ops torch has registered in the accelerator's namespace ("ns::name"), sorted: the kernels
// a spec written for a graph of this accelerator may list beside the ones the graph calls.
std::vector<std::string> registered_ops(const Accelerator& accelerator);

}  // namespace distspec::models::torch_kind
