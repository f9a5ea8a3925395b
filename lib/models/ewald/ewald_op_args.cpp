#include "models/ewald/ewald_op_args.h"

#include "models/edge_kernel.h"
#include "models/ewald/ewald.h"

namespace distspec::models::ewald {

ChargedAtoms unpack_charged_atoms(const char* op, Span<const TensorRef> args, Device device) {
  ChargedAtoms a;
  a.n = args[0].rows;
  a.x = expect_f64(op, "positions", 0, args[0], a.n, 3, false, device);
  a.q = expect_f64(op, "charges", 1, args[1], a.n, 1, false, device);
  return a;
}

KSpaceArgs unpack_kspace_args(const char* op, Span<const TensorRef> args, std::size_t n_args, Device device) {
  expect_count(op, "arguments", args.size(), n_args);
  KSpaceArgs a;
  static_cast<ChargedAtoms&>(a) = unpack_charged_atoms(op, args, device);
  a.n_k = args[3].rows;
  a.cell = expect_f64(op, "cell", 2, args[2], 3, 3, false, device);
  a.k = expect_f64(op, "k-vectors", 3, args[3], a.n_k, 3, false, device);
  a.alpha = expect_f64(op, "alpha", 4, args[4], 1, 1, false, device);
  return a;
}

StructureFactorOutputs unpack_structure_factor_outputs(Span<const TensorRef> outs, std::size_t n_k, Device device) {
  const char* op = kStructureFactorsOp.qualname;
  expect_count(op, "outputs", outs.size(), 3);
  StructureFactorOutputs o;
  o.real = expect_f64(op, "real part", 0, outs[0], n_k, 1, false, device);
  o.imag = expect_f64(op, "imaginary part", 1, outs[1], n_k, 1, false, device);
  o.total_charge = expect_f64(op, "total charge", 2, outs[2], 1, 1, false, device);
  return o;
}

ReciprocalArgs unpack_reciprocal(Span<const TensorRef> args, Span<const TensorRef> outs, Device device) {
  const char* op = kReciprocalOp.qualname;
  ReciprocalArgs r;
  r.in = unpack_kspace_args(op, args, 8, device);
  r.real = expect_f64(op, "real part", 5, args[5], r.in.n_k, 1, false, device);
  r.imag = expect_f64(op, "imaginary part", 6, args[6], r.in.n_k, 1, false, device);
  r.total_charge = expect_f64(op, "total charge", 7, args[7], 1, 1, false, device);
  expect_count(op, "outputs", outs.size(), 4);
  r.energy = expect_f64(op, "energy rows", 0, outs[0], r.in.n, 1, false, device);
  r.forces = expect_f64(op, "forces", 1, outs[1], r.in.n, 3, false, device);
  r.virial = expect_f64(op, "virial", 2, outs[2], 6, 1, true, device);
  r.virial_rows = expect_f64(op, "per-row virial", 3, outs[3], r.in.n, 6, true, device);
  return r;
}

}  // namespace distspec::models::ewald
