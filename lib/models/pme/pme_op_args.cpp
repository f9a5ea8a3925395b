#include "models/pme/pme_op_args.h"

#include "distspec/error.h"
#include "models/edge_kernel.h"
#include "models/model_error.h"

namespace distspec::models::pme {
namespace {

// Arguments 0..2 of `op`: positions (n x 3), charges (n) and cell_inv_t (3 x 3).
void unpack_atoms(const char* op, Span<const TensorRef> args, Device device, AtomArgs& a) {
  static_cast<ewald::ChargedAtoms&>(a) = ewald::unpack_charged_atoms(op, args, device);
  a.inv_t = expect_f64(op, "cell_inv_t", 2, args[2], 3, 3, false, device);
}

}  // namespace

SpreadArgs unpack_spread(Span<const TensorRef> args, Span<const TensorRef> outs, const Params& params, Device device) {
  const char* op = kSpreadOp.qualname;
  expect_count(op, "arguments", args.size(), 3);
  expect_count(op, "outputs", outs.size(), 1);
  SpreadArgs a;
  unpack_atoms(op, args, device, a);
  a.mesh = expect_f64(op, "charge mesh", 0, outs[0], params.mesh_points(), 1, false, device);
  return a;
}

SolveArgs unpack_solve(Span<const TensorRef> args, Span<const TensorRef> outs, const Params& params, Device device) {
  const char* op = kSolveOp.qualname;
  const std::size_t k = params.mesh_points();
  expect_count(op, "arguments", args.size(), 3);
  expect_count(op, "outputs", outs.size(), 3);
  SolveArgs a;
  a.mesh = expect_f64(op, "charge mesh", 0, args[0], k, 1, false, device);
  a.inv_t = expect_f64(op, "cell_inv_t", 1, args[1], 3, 3, false, device);
  a.alpha = expect_f64(op, "alpha", 2, args[2], 1, 1, false, Device::cpu);
  a.potential = expect_f64(op, "potential mesh", 0, outs[0], k, 1, false, device);
  a.virial = expect_f64(op, "virial", 1, outs[1], 6, 1, false, Device::cpu);
  a.virial_meshes = expect_f64(op, "virial meshes", 2, outs[2], 6, k, true, device);
  return a;
}

InterpolateArgs unpack_interpolate(Span<const TensorRef> args, Span<const TensorRef> outs, const Params& params,
                                   Device device) {
  const char* op = kInterpolateOp.qualname;
  const std::size_t k = params.mesh_points();
  expect_count(op, "arguments", args.size(), 7);
  expect_count(op, "outputs", outs.size(), 3);
  InterpolateArgs a;
  unpack_atoms(op, args, device, a);
  a.potential = expect_f64(op, "potential mesh", 3, args[3], k, 1, false, device);
  a.virial_meshes = expect_f64(op, "virial meshes", 4, args[4], 6, k, true, device);
  a.total_charge = expect_f64(op, "total charge", 5, args[5], 1, 1, false, Device::cpu);
  a.alpha = expect_f64(op, "alpha", 6, args[6], 1, 1, false, Device::cpu);
  a.energy = expect_f64(op, "energy rows", 0, outs[0], a.n, 1, false, device);
  a.forces = expect_f64(op, "forces", 1, outs[1], a.n, 3, false, device);
  a.virial_rows = expect_f64(op, "per-row virial", 2, outs[2], a.n, 6, true, device);
  return a;
}

}  // namespace distspec::models::pme
