// Device op arguments of the pair kernels, checked as the CPU kernels check theirs.
#include "models/cuda/pair_tally.cuh"
#include "models/edge_kernel.h"

namespace distspec::models::cuda {

PairTallyArgs unpack_device_edge_args(const char* op, Span<const TensorRef> args) {
  PairTallyArgs a;
  const std::size_t n_rows = args[0].rows;
  a.n_receivers = args[2].rows;
  a.x = expect_f64(op, "positions", 0, args[0], n_rows, 3, false, Device::cuda);
  a.species = expect_i32(op, "species", 1, args[1], n_rows, Device::cuda);
  a.receivers = expect_i32(op, "receivers", 2, args[2], a.n_receivers, Device::cuda);
  a.offsets = expect_i32(op, "offsets", 3, args[3], a.n_receivers + 1, Device::cuda);
  a.senders = expect_i32(op, "senders", 4, args[4], args[4].rows, Device::cuda);
  return a;
}

double* unpack_device_pair_outputs(const char* op, Span<const TensorRef> outs, std::size_t n_outputs, std::size_t n_rows,
                                   PairTallyArgs& a) {
  expect_count(op, "outputs", outs.size(), n_outputs);
  a.energy = expect_f64(op, "energy rows", 0, outs[0], n_rows, 1, false, Device::cuda);
  a.forces = expect_f64(op, "forces", 1, outs[1], n_rows, 3, false, Device::cuda);
  if (n_outputs < 4) return nullptr;
  a.virial_rows = expect_f64(op, "per-row virial", 3, outs[3], n_rows, 6, true, Device::cuda);
  return expect_f64(op, "virial", 2, outs[2], 6, 1, true, Device::cuda);
}

}  // namespace distspec::models::cuda
