// The argument and output layouts of the PME ops (pme.h), checked once for the CPU and the CUDA
// kernels alike: dtypes, shapes and the device the tensors live on.
#pragma once

#include <cstddef>

#include "distspec/ops/op_registry.h"
#include "models/ewald/ewald_op_args.h"
#include "models/pme/pme.h"

namespace distspec::models::pme {

// Arguments 0..2 of spline_spread and interpolate: the atoms, as the Ewald ops read them, and
// the cell.
struct AtomArgs : ewald::ChargedAtoms {
  const double* inv_t = nullptr;  // 3 x 3
};

struct SpreadArgs : AtomArgs {
  double* mesh = nullptr;  // K1 K2 K3
};
SpreadArgs unpack_spread(Span<const TensorRef> args, Span<const TensorRef> outs, const Params& params, Device device);

struct SolveArgs {
  const double* mesh = nullptr;   // K1 K2 K3
  const double* inv_t = nullptr;  // 3 x 3
  const double* alpha = nullptr;  // 1
  double* potential = nullptr;    // K1 K2 K3
  double* virial = nullptr;       // 6
  double* virial_meshes = nullptr;  // 6 x K1 K2 K3, or nullptr
};
SolveArgs unpack_solve(Span<const TensorRef> args, Span<const TensorRef> outs, const Params& params, Device device);

struct InterpolateArgs : AtomArgs {
  const double* potential = nullptr;
  const double* virial_meshes = nullptr;  // or nullptr
  const double* total_charge = nullptr;   // 1
  const double* alpha = nullptr;          // 1
  double* energy = nullptr;               // n, added into
  double* forces = nullptr;               // n x 3, added into
  double* virial_rows = nullptr;          // n x 6, added into; may be null
};
InterpolateArgs unpack_interpolate(Span<const TensorRef> args, Span<const TensorRef> outs, const Params& params,
                                   Device device);

}  // namespace distspec::models::pme
