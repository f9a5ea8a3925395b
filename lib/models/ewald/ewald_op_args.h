// The argument and output layouts of the Ewald ops (ewald.h), checked once for the CPU and the
// CUDA kernels alike: dtypes, shapes and the device the tensors live on.
#pragma once

#include <cstddef>

#include "distspec/ops/op_registry.h"

namespace distspec::models::ewald {

// Arguments 0 and 1 of the ops that read the atoms (these k-space ops; PME's spread and
// interpolate, pme_op_args.h): positions and charges.
struct ChargedAtoms {
  const double* x = nullptr;  // n x 3
  const double* q = nullptr;  // n
  std::size_t n = 0;
};
ChargedAtoms unpack_charged_atoms(const char* op, Span<const TensorRef> args, Device device);

// Arguments 0..4 of both k-space ops.
struct KSpaceArgs : ChargedAtoms {
  const double* cell = nullptr;  // 3 x 3, rows a b c
  const double* k = nullptr;     // n_k x 3
  std::size_t n_k = 0;
  const double* alpha = nullptr;  // 1
};

struct StructureFactorOutputs {
  double* real = nullptr;          // n_k
  double* imag = nullptr;          // n_k
  double* total_charge = nullptr;  // 1
};

// Arguments 5..7 and the outputs of the reciprocal op.
struct ReciprocalArgs {
  KSpaceArgs in;
  const double* real = nullptr;
  const double* imag = nullptr;
  const double* total_charge = nullptr;
  double* energy = nullptr;       // n, added into
  double* forces = nullptr;       // n x 3, added into
  double* virial = nullptr;       // 6, added into; may be null
  double* virial_rows = nullptr;  // n x 6, added into; may be null
};

KSpaceArgs unpack_kspace_args(const char* op, Span<const TensorRef> args, std::size_t n_args, Device device);
StructureFactorOutputs unpack_structure_factor_outputs(Span<const TensorRef> outs, std::size_t n_k, Device device);
ReciprocalArgs unpack_reciprocal(Span<const TensorRef> args, Span<const TensorRef> outs, Device device);

}  // namespace distspec::models::ewald
