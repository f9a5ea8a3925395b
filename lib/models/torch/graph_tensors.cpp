#include "models/torch/graph_tensors.h"

#include <algorithm>

#ifdef DISTSPEC_WITH_CUDA
#include "distspec/halo/device_staging.h"
#endif
#include "models/torch/torch_runtime.h"

namespace distspec::models::torch_kind {

c10::Device graph_device(const AtomGraph& graph, Device model_device) {
#ifdef DISTSPEC_WITH_CUDA
  // A host hands over all its arrays in one kind of memory.
  const void* any = graph.species ? static_cast<const void*>(graph.species) : static_cast<const void*>(graph.positions);
  if (model_device == Device::cuda && is_device_pointer(any)) return torch_device(model_device);
#else
  (void)graph;
  (void)model_device;
#endif
  return c10::Device(c10::kCPU);
}

GraphTensors wrap_graph(const AtomGraph& graph, c10::Device where) {
  const auto n = static_cast<int64_t>(graph.n_rows());
  const auto r = static_cast<int64_t>(graph.n_receivers);
  const auto f64 = at::dtype(at::kDouble).device(where);
  const auto i32 = at::dtype(at::kInt).device(where);
  auto wrap = [](const void* data, at::IntArrayRef shape, const at::TensorOptions& options) {
    // An empty array may come without a pointer; torch wants one of its own then.
    if (!data || c10::multiply_integers(shape) == 0) return at::empty(shape, options);
    return at::from_blob(const_cast<void*>(data), shape, options);
  };
  GraphTensors t;
  t.positions = wrap(graph.positions, {n, 3}, f64);
  t.species = wrap(graph.species, {n}, i32);
  t.receivers = wrap(graph.receivers, {r}, i32);
  if (r == 0) {
    t.offsets = at::zeros({1}, i32);
    t.senders = at::empty({0}, i32);
    return t;
  }
  t.offsets = wrap(graph.offsets, {r + 1}, i32);
  // The edge count is read once, from wherever the offsets live.
  const int64_t e = std::max<int64_t>(t.offsets[r].item<int>(), 0);
  t.senders = wrap(graph.senders, {e}, i32);
  return t;
}

at::Tensor wrap_positions(const AtomGraph& graph, c10::Device where) {
  const auto n = static_cast<int64_t>(graph.n_rows());
  const auto f64 = at::dtype(at::kDouble).device(where);
  if (!graph.positions || n == 0) return at::empty({n, 3}, f64);
  return at::from_blob(const_cast<double*>(graph.positions), {n, 3}, f64);
}

GraphTensors GraphTensors::to(c10::Device device) const {
  return {positions.to(device), species.to(device), receivers.to(device), offsets.to(device), senders.to(device)};
}

EdgePairs EdgePairs::where(const at::Tensor& keep) const {
  const at::Tensor at_kept = keep.nonzero().squeeze(1);
  return {senders.index_select(0, at_kept), receivers.index_select(0, at_kept)};
}

EdgePairs expand_edges(const GraphTensors& graph) {
  const int64_t e = graph.senders.numel();
  const at::Tensor counts = (graph.offsets.slice(0, 1) - graph.offsets.slice(0, 0, -1)).to(at::kLong);
  EdgePairs pairs;
  pairs.senders = graph.senders.to(at::kLong);
  pairs.receivers = e == 0 ? at::empty({0}, pairs.senders.options())
                           : at::repeat_interleave(graph.receivers.to(at::kLong), counts, 0, e);
  return pairs;
}

at::Tensor within_cutoff(const at::Tensor& positions, const EdgePairs& pairs, double cutoff) {
  const at::Tensor d = positions.index_select(0, pairs.senders) - positions.index_select(0, pairs.receivers);
  const at::Tensor r2 = d.select(1, 0) * d.select(1, 0) + d.select(1, 1) * d.select(1, 1) + d.select(1, 2) * d.select(1, 2);
  return r2 < cutoff * cutoff;
}

at::Tensor virial_rows_of(const at::Tensor& x, const at::Tensor& f) {
  auto c = [](const at::Tensor& t, int k) { return t.select(1, k); };
  return at::stack({c(x, 0) * c(f, 0), c(x, 1) * c(f, 1), c(x, 2) * c(f, 2), c(x, 0) * c(f, 1), c(x, 0) * c(f, 2),
                    c(x, 1) * c(f, 2)},
                   1);
}

at::Tensor sevennet_virial_rows_of(const at::Tensor& r, const at::Tensor& g) {
  auto c = [](const at::Tensor& t, int k) { return t.select(1, k); };
  return at::stack({c(r, 0) * c(g, 0), c(r, 1) * c(g, 1), c(r, 2) * c(g, 2), c(r, 0) * c(g, 1), c(r, 2) * c(g, 0),
                    c(r, 1) * c(g, 2)},
                   1);
}

void deliver(RowResults results, std::size_t n_rows, const OutputRequest& request, ModelOutputs& out,
             RowResults& kept) {
  const bool virial = request.virial || request.virial_rows;
  const bool stay = request.rows_on_device && results.forces.device().is_cuda();
  out.reset(n_rows, request, stay);
  // The energy, then the virial: seven values in one download, after every kernel before them.
  at::Tensor sums = results.energy_rows.sum().reshape({1});
  if (virial) sums = at::cat({sums, results.virial_rows.sum(0)});
  const at::Tensor host = sums.to(at::kCPU);
  const double* s = host.data_ptr<double>();
  out.energy = s[0];
  if (request.virial) std::copy(s + 1, s + 7, out.virial.begin());
  if (stay) {
    kept = std::move(results);
    out.device.forces = kept.forces.data_ptr<double>();
    out.device.energy_rows = request.energy_rows ? kept.energy_rows.data_ptr<double>() : nullptr;
    out.device.virial_rows = request.virial_rows ? kept.virial_rows.data_ptr<double>() : nullptr;
    return;
  }
  auto download = [](const at::Tensor& t, std::vector<double>& into) {
    const at::Tensor h = t.to(at::kCPU).contiguous();
    std::copy(h.data_ptr<double>(), h.data_ptr<double>() + h.numel(), into.begin());
  };
  if (n_rows == 0) return;
  download(results.forces, out.forces);
  if (request.energy_rows) download(results.energy_rows, out.energy_rows);
  if (request.virial_rows) download(results.virial_rows, out.virial_rows);
}

}  // namespace distspec::models::torch_kind
