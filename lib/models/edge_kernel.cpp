#include "models/edge_kernel.h"

#include <algorithm>
#include <limits>

#include "distspec/error.h"
#include "models/model_error.h"

namespace distspec::models {
namespace {

[[noreturn]] void fail(const std::string& op, const std::string& message) {
  throw Error(model_error_id::op_args, "", "op '" + op + "': " + message,
              "see the op's argument layout in its model header");
}

std::string shape(std::size_t rows, std::size_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

std::string where(const char* what, std::size_t pos) { return std::string(what) + " (" + std::to_string(pos) + ")"; }

int min_of(const int* v, std::size_t n) {
  int m = std::numeric_limits<int>::max();
  for (std::size_t k = 0; k < n; ++k) m = std::min(m, v[k]);
  return m;
}

int max_of(const int* v, std::size_t n) {
  int m = std::numeric_limits<int>::min();
  for (std::size_t k = 0; k < n; ++k) m = std::max(m, v[k]);
  return m;
}

}  // namespace

void expect_count(const std::string& op, const char* what, std::size_t found, std::size_t expected) {
  if (found != expected)
    fail(op, "expected " + std::to_string(expected) + " " + what + ", got " + std::to_string(found));
}

double* expect_f64(const std::string& op, const char* what, std::size_t pos, const TensorRef& t, std::size_t rows,
                   std::size_t cols, bool optional, Device device) {
  if (optional && t.rows == 0) return nullptr;
  if (t.dtype != DType::f64) fail(op, where(what, pos) + " must be float64, got " + dtype_name(t.dtype));
  if (t.device != device)
    fail(op, where(what, pos) + " must be on the " + device_name(device) + ", got " + device_name(t.device));
  if (t.rows != rows || t.cols != cols)
    fail(op, where(what, pos) + " must be " + shape(rows, cols) + ", got " + shape(t.rows, t.cols));
  return static_cast<double*>(t.data);
}

const int* expect_i32(const std::string& op, const char* what, std::size_t pos, const TensorRef& t, std::size_t rows,
                      Device device) {
  if (t.dtype != DType::i32) fail(op, where(what, pos) + " must be int32, got " + dtype_name(t.dtype));
  if (t.device != device)
    fail(op, where(what, pos) + " must be on the " + device_name(device) + ", got " + device_name(t.device));
  if (t.rows != rows || t.cols != 1) fail(op, where(what, pos) + " must be " + shape(rows, 1) + ", got " + shape(t.rows, t.cols));
  return static_cast<const int*>(t.data);
}

std::vector<TensorRef> edge_args(const AtomGraph& g) {
  // A host with no receivers may leave offsets null; the kernels then read no offset at all.
  const std::size_t n_edges = g.n_receivers ? static_cast<std::size_t>(g.offsets[g.n_receivers]) : 0;
  return {TensorRef::of(g.positions, g.n_rows(), 3), TensorRef::of(g.species, g.n_rows()),
          TensorRef::of(g.receivers, g.n_receivers), TensorRef::of(g.offsets, g.n_receivers + 1),
          TensorRef::of(g.senders, n_edges)};
}

EdgeCall edge_call(const AtomGraph& graph, IndexCheckSchedule& checks, const OutputRequest& request,
                   ThreadRows<double>* thread_rows) {
  EdgeCall call;
  call.threads = request.threads;
  call.thread_rows = thread_rows;
  call.list = graph.edge_list;
  call.check_indices = checks.due(graph);
  call.newton_on_ends = graph.newton_on_ends;
  call.owner_rows = graph.owner_rows;
  return call;
}

void EdgeArgs::use_newton_on_ends(const std::string& op, const int* newton_on_ends, bool check) {
  if (check)
    for (std::size_t r = 0; r < n_receivers; ++r)
      if (newton_on_ends[r] < offsets[r] || newton_on_ends[r] > offsets[r + 1])
        fail(op, "newton-on end " + std::to_string(newton_on_ends[r]) + " of receiver " + std::to_string(r) +
                     " lies outside its senders");
  ends = newton_on_ends;
}

void EdgeArgs::check_owner_rows(const std::string& op, const int* owner_rows, bool check) const {
  if (!check) return;
  for (std::size_t j = 0; j < n_rows; ++j)
    if (owner_rows[j] < -1 || owner_rows[j] >= static_cast<int>(n_rows))
      fail(op, "owner row " + std::to_string(owner_rows[j]) + " of row " + std::to_string(j) + " is not -1 or one of the " +
                   std::to_string(n_rows) + " rows");
}

EdgeArgs unpack_edge_args(const std::string& op, Span<const TensorRef> args, int n_species, const EdgeCall& call) {
  if (args.size() < kEdgeArgCount) expect_count(op, "edge-list arguments", args.size(), kEdgeArgCount);
  EdgeArgs e;
  e.n_rows = args[0].rows;
  e.n_receivers = args[2].rows;
  e.x = expect_f64(op, "positions", 0, args[0], e.n_rows, 3);
  e.species = expect_i32(op, "species", 1, args[1], e.n_rows);
  e.receivers = expect_i32(op, "receivers", 2, args[2], e.n_receivers);
  e.offsets = expect_i32(op, "offsets", 3, args[3], e.n_receivers + 1);
  const std::size_t n_edges = args[4].rows;
  e.senders = expect_i32(op, "senders", 4, args[4], n_edges);
  e.list = call.list;
  if (!call.check_indices) return e;
  // As min / max reductions, which the compiler vectorises; the offending value is looked for
  // only when there is one.
  if (max_of(e.species, e.n_rows) >= n_species)
    for (std::size_t i = 0; i < e.n_rows; ++i)
      if (e.species[i] >= n_species)
        fail(op, "species " + std::to_string(e.species[i]) + " of row " + std::to_string(i) +
                     " is not one of the model's " + std::to_string(n_species) + " elements");
  if (e.n_receivers == 0 && n_edges == 0) return e;
  // Index checks cost one pass over the edges, far less than the kernel itself, and turn a
  // host bug into an error instead of a wild read.
  if (e.offsets[0] != 0 || static_cast<std::size_t>(e.offsets[e.n_receivers]) != n_edges)
    fail(op, "offsets must run from 0 to the number of senders (" + std::to_string(n_edges) + ")");
  for (std::size_t r = 0; r < e.n_receivers; ++r) {
    if (e.receivers[r] < 0 || static_cast<std::size_t>(e.receivers[r]) >= e.n_rows)
      fail(op, "receiver " + std::to_string(e.receivers[r]) + " is not a row");
    if (e.offsets[r + 1] < e.offsets[r]) fail(op, "offsets must not decrease");
  }
  if (n_edges > 0 && (min_of(e.senders, n_edges) < 0 || static_cast<std::size_t>(max_of(e.senders, n_edges)) >= e.n_rows))
    for (std::size_t k = 0; k < n_edges; ++k)
      if (e.senders[k] < 0 || static_cast<std::size_t>(e.senders[k]) >= e.n_rows)
        fail(op, "sender " + std::to_string(e.senders[k]) + " is not a row");
  return e;
}

PairOutputs unpack_pair_outputs(const std::string& op, Span<const TensorRef> outs, std::size_t n_rows, bool with_virial) {
  expect_count(op, "outputs", outs.size(), with_virial ? 4 : 2);
  PairOutputs o;
  o.energy = expect_f64(op, "energy rows", 0, outs[0], n_rows, 1, true);
  o.forces = expect_f64(op, "forces", 1, outs[1], n_rows, 3);
  if (with_virial) {
    o.virial = expect_f64(op, "virial", 2, outs[2], 6, 1, true);
    o.virial_rows = expect_f64(op, "per-row virial", 3, outs[3], n_rows, 6, true);
  }
  return o;
}

std::vector<TensorRef> pair_output_refs(ModelOutputs& out, std::vector<double>& energy_rows, bool with_virial) {
  const std::size_t n = out.forces.size() / 3;
  // No energy rows (an empty vector): an empty output, which the kernels skip.
  std::vector<TensorRef> refs{TensorRef::of(energy_rows.data(), energy_rows.empty() ? 0 : n),
                              TensorRef::of(out.forces.data(), n, 3)};
  if (with_virial) {
    refs.push_back(TensorRef::of(out.virial.data(), 6));
    refs.push_back(TensorRef::of(out.virial_rows.data(), out.virial_rows.size() / 6, 6));
  }
  return refs;
}

double owned_energy(const std::vector<double>& energy_rows, std::size_t n_owned) {
  double e = 0.0;
  for (std::size_t i = 0; i < std::min(n_owned, energy_rows.size()); ++i) e += energy_rows[i];
  return e;
}

double pair_energy(const std::vector<double>& energy_rows, const AtomGraph& graph) {
  const bool halo_shares = graph.edge_list == EdgeList::half_newton_on || graph.newton_on_ends;
  return owned_energy(energy_rows, halo_shares ? graph.n_rows() : graph.n_owned);
}

}  // namespace distspec::models
