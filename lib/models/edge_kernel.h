// What the edge-list kernels of this library share: the positional edge-list arguments, shape
// checks that name the op and position, and the per-edge tally of energy, force and virial.
//
// Edge-list arguments, first in every op that walks edges:
//   0 positions  (n_rows x 3, f64)  rows [owned | halo]
//   1 species    (n_rows, i32)      index into the model's elements; < 0: not this model's atom
//   2 receivers  (n_receivers, i32) owned rows
//   3 offsets    (n_receivers + 1, i32) CSR: receiver r's senders are senders[offsets[r]..offsets[r+1])
//   4 senders    (n_edges, i32)     any row
// Edges come from a neighbour list (with skin) over owned receivers, so each kernel applies its
// own cutoff. From a full list (EdgeList::full) a kernel puts everything an edge contributes on
// receivers only: on its own receiver (for_each_edge), or, for a pair of receivers visited once,
// on both (for_each_pair); halo rows that are not receivers get nothing. Ops whose pair terms
// are symmetric may also take half lists (EdgeList::half_newton_off / half_newton_on, see
// model.h), which for_each_pair walks as LAMMPS' pair styles walk theirs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "distspec/ops/op_registry.h"
#include "distspec/util/threads.h"
#include "models/model.h"

namespace distspec::models {

inline constexpr std::size_t kEdgeArgCount = 5;

// How the model calls a CPU pair op of this library, beside its constants: the listing of the
// edges, and whether the op checks their indices. Index checks are one pass over the edges, a
// few percent of a pair step; the model asks for them once per topology (AtomGraph::
// topology_generation), and at every call where the host gives no generation.
struct EdgeCall {
  EdgeList list = EdgeList::full;
  bool check_indices = true;
  const int* newton_on_ends = nullptr;  // AtomGraph::newton_on_ends, for the ops that walk them
  const int* owner_rows = nullptr;      // AtomGraph::owner_rows, where the host gives them
  int threads = 1;                      // OutputRequest::threads (distspec/util/threads.h)
  ThreadRows<double>* thread_rows = nullptr;  // the model's per-thread copies; nullptr: one thread
};
// The state such an op is called with.
template <class Constants>
struct EdgeOpState {
  const Constants* constants = nullptr;
  EdgeCall call;
};

// Decides EdgeCall::check_indices from the graph's topology generation.
class IndexCheckSchedule {
 public:
  bool due(const AtomGraph& graph) {
    const bool due = graph.topology_generation == 0 || graph.topology_generation != checked_;
    checked_ = graph.topology_generation;
    return due;
  }

 private:
  std::uint64_t checked_ = 0;
};

struct EdgeArgs {
  const double* x = nullptr;
  const int* species = nullptr;
  std::size_t n_rows = 0;
  const int* receivers = nullptr;
  const int* offsets = nullptr;
  const int* senders = nullptr;
  std::size_t n_receivers = 0;
  EdgeList list = EdgeList::full;
  // Set by use_newton_on_ends: for_each_pair walks senders[offsets[r] .. ends[r]), all `both`.
  const int* ends = nullptr;

  // A half_newton_off list walked as newton on's (AtomGraph::newton_on_ends); with `check`,
  // the ends are checked against the offsets first.
  void use_newton_on_ends(const std::string& op, const int* newton_on_ends, bool check);
  // With `check`, throws unless every owner row (AtomGraph::owner_rows) is -1 or a row.
  void check_owner_rows(const std::string& op, const int* owner_rows, bool check) const;

  // f(i, j, del, rsq) for every edge j -> i whose atoms both belong to the model, del = x_i - x_j;
  // of receivers [r_begin, r_end) only, where given.
  template <class F>
  void for_each_edge(F&& f, std::size_t r_begin = 0, std::size_t r_end = kAll) const {
    r_end = std::min(r_end, n_receivers);
    for (std::size_t r = r_begin; r < r_end; ++r) {
      const int i = receivers[r];
      if (species[i] < 0) continue;
      const double* xi = x + 3 * static_cast<std::size_t>(i);
      for (int e = offsets[r]; e < offsets[r + 1]; ++e) {
        const int j = senders[e];
        if (species[j] < 0) continue;
        const double* xj = x + 3 * static_cast<std::size_t>(j);
        const double del[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
        f(i, j, del, del[0] * del[0] + del[1] * del[1] + del[2] * del[2]);
      }
    }
  }

  // f(i, j, del, rsq, both) once per pair of atoms, for kernels whose pair terms are symmetric,
  // then done(i) after the last pair of receiver i (where the kernel adds what it summed for i
  // in registers to i's row, as LAMMPS' pair styles do with fxtmp). With `both` the kernel puts
  // the pair's terms on j as well; without, on the receiver i only.
  //   full: a pair of receivers is there twice (j -> i and i -> j); only the direction with
  //     i < j is visited, with `both`, which halves the work on pairs of owned atoms. A pair
  //     whose sender is a halo row is visited once, without `both`.
  //   half_newton_off: every edge, `both` where the sender is a receiver.
  //   half_newton_on: every edge, always `both`: halo rows get their atoms' shares.
  //   half_newton_off with use_newton_on_ends: as half_newton_on, over each receiver's first
  //     senders.
  // Receivers [r_begin, r_end) only, where given (a thread's range, distspec/util/threads.h).
  template <class F, class Done>
  void for_each_pair(F&& f, Done&& done, std::size_t r_begin = 0, std::size_t r_end = kAll) const {
    r_end = std::min(r_end, n_receivers);
    if (list == EdgeList::half_newton_on || ends) {
      pairs_where<false>(f, done, [](int) { return true; }, r_begin, r_end);
      return;
    }
    // Receivers 0, 1, ..., n-1 (the owned rows of a per-layer step without NULL types, the
    // common case): a sender is a receiver exactly when j < n, with no mask to read per edge.
    bool leading_rows = true;
    for (std::size_t r = 0; r < n_receivers; ++r) leading_rows &= receivers[r] == static_cast<int>(r);
    if (leading_rows) {
      const int n = static_cast<int>(n_receivers);
      if (list == EdgeList::full) pairs_where<true>(f, done, [n](int j) { return j < n; }, r_begin, r_end);
      else pairs_where<false>(f, done, [n](int j) { return j < n; }, r_begin, r_end);
      return;
    }
    std::vector<unsigned char> mask(n_rows, 0);
    for (std::size_t r = 0; r < n_receivers; ++r) mask[static_cast<std::size_t>(receivers[r])] = 1;
    auto is_receiver = [&mask](int j) { return mask[static_cast<std::size_t>(j)] != 0; };
    if (list == EdgeList::full) pairs_where<true>(f, done, is_receiver, r_begin, r_end);
    else pairs_where<false>(f, done, is_receiver, r_begin, r_end);
  }

  static constexpr std::size_t kAll = static_cast<std::size_t>(-1);

 private:
  // kSkipReverse: a full list, whose pairs of receivers are visited in one direction only.
  template <bool kSkipReverse, class F, class Done, class Both>
  void pairs_where(F& f, Done& done, Both both_of, std::size_t r_begin, std::size_t r_end) const {
    for (std::size_t r = r_begin; r < r_end; ++r) {
      const int i = receivers[r];
      if (species[i] < 0) continue;
      // In registers: the kernel's writes to output rows could alias x for all the compiler knows.
      const double xi[3] = {x[3 * static_cast<std::size_t>(i)], x[3 * static_cast<std::size_t>(i) + 1],
                            x[3 * static_cast<std::size_t>(i) + 2]};
      const int end = ends ? ends[r] : offsets[r + 1];
      for (int e = offsets[r]; e < end; ++e) {
        const int j = senders[e];
        const bool both = both_of(j);
        if ((kSkipReverse && both && j < i) || species[j] < 0) continue;
        const double* xj = x + 3 * static_cast<std::size_t>(j);
        const double del[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
        f(i, j, del, del[0] * del[0] + del[1] * del[1] + del[2] * del[2], both);
      }
      done(i);
    }
  }
};

// What one receiver gathers over its pairs before PairOutputs::flush adds it to its rows.
struct ReceiverSums {
  double energy = 0.0;
  double force[3] = {0.0, 0.0, 0.0};
  double virial[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};       // the receiver's half of its pairs
  double virial_both[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};  // the other half of pairs visited once for both
};

// The five edge-list TensorRefs of a graph.
std::vector<TensorRef> edge_args(const AtomGraph& graph);
// Checks dtypes and shapes of args[0..4], and (call.check_indices) species (< n_species) and
// index ranges; throws distspec::Error naming `op`.
EdgeArgs unpack_edge_args(const std::string& op, Span<const TensorRef> args, int n_species, const EdgeCall& call = {});
// The EdgeCall for a graph: its listing, index checks when the schedule says so, and the
// request's threads with the model's per-thread rows.
EdgeCall edge_call(const AtomGraph& graph, IndexCheckSchedule& checks, const OutputRequest& request = {},
                   ThreadRows<double>* thread_rows = nullptr);

void expect_count(const std::string& op, const char* what, std::size_t found, std::size_t expected);
// A float64 tensor of exactly rows x cols on `device`; with `optional`, an empty tensor
// (rows == 0) gives nullptr.
double* expect_f64(const std::string& op, const char* what, std::size_t pos, const TensorRef& t, std::size_t rows,
                   std::size_t cols, bool optional = false, Device device = Device::cpu);
const int* expect_i32(const std::string& op, const char* what, std::size_t pos, const TensorRef& t, std::size_t rows,
                      Device device = Device::cpu);

// What an edge op's CPU kernel is handed, cast and checked once by add_edge_kernel: the model's
// constants, the edge arrays (arguments 0..4, unpacked), the op's further arguments, its
// outputs and the call's listing and threads.
template <class Constants>
struct EdgeKernelCall {
  const char* op;
  const Constants& constants;
  EdgeArgs edges;
  Span<const TensorRef> extra_args;  // the arguments after the five edge tensors
  Span<const TensorRef> outs;
  const EdgeCall& call;

  // Further argument k, a float64 column of one value per row (EAM's F'(rho), charges).
  const double* per_row(std::size_t k, const char* what) const {
    return expect_f64(op, what, kEdgeArgCount + k, extra_args[k], edges.n_rows, 1);
  }
};

// Registers a CPU edge kernel for `op`, which takes the five edge tensors and `extra_args`
// more, and whose handle declares EdgeOpState<Constants> on the CPU: the edge arrays are
// unpacked and checked once here, so that the kernel's signature names what it reads.
template <class Constants, class CudaState>
void add_edge_kernel(OpRegistry& registry, const Op<EdgeOpState<Constants>, CudaState>& op, std::size_t extra_args,
                     void (*kernel)(const EdgeKernelCall<Constants>&)) {
  const char* name = op.qualname;
  registry.add<Device::cpu>(op, [name, extra_args, kernel](Span<const TensorRef> args, Span<const TensorRef> outs,
                                                           const EdgeOpState<Constants>& s) {
    expect_count(name, "arguments", args.size(), kEdgeArgCount + extra_args);
    const EdgeKernelCall<Constants> call{name,
                                         *s.constants,
                                         unpack_edge_args(name, args, s.constants->n_species, s.call),
                                         Span<const TensorRef>(args.data() + kEdgeArgCount, extra_args),
                                         outs,
                                         s.call};
    kernel(call);
  });
}

// Outputs of an op that produces pair energy, forces and virial, all added into (the caller
// zeroes them):
//   0 energy rows (n_rows, f64; an empty tensor skips the energy), 1 forces (n_rows x 3, f64),
//   2 virial (6, f64: xx yy zz xy xz yz), 3 per-row virial (n_rows x 6, f64)
// Ops without virial take outputs 0 and 1 only; in ops with virial either virial output may be
// an empty tensor (rows == 0), which skips it.
struct PairOutputs {
  double* energy = nullptr;
  double* forces = nullptr;
  double* virial = nullptr;
  double* virial_rows = nullptr;

  // One edge j -> i: half the pair energy and the whole pair force f_ij = fpair * del on the
  // receiver; half the pair virial del (x) f_ij (LAMMPS sign: positive for repulsion), since
  // the full list holds the pair twice, globally and on the receiver's row (LAMMPS gives each
  // atom of a pair half, so owned rows come out exact and halo rows stay zero).
  void tally(int i, double half_energy, double fpair, const double del[3]) const {
    energy[i] += half_energy;
    double* fi = forces + 3 * static_cast<std::size_t>(i);
    fi[0] += del[0] * fpair;
    fi[1] += del[1] * fpair;
    fi[2] += del[2] * fpair;
    if (!virial && !virial_rows) return;
    const double h = 0.5 * fpair;
    const double v[6] = {h * del[0] * del[0], h * del[1] * del[1], h * del[2] * del[2],
                         h * del[0] * del[1], h * del[0] * del[2], h * del[1] * del[2]};
    if (virial)
      for (int k = 0; k < 6; ++k) virial[k] += v[k];
    if (virial_rows)
      for (int k = 0; k < 6; ++k) virial_rows[6 * static_cast<std::size_t>(i) + k] += v[k];
  }

  // One pair from EdgeArgs::for_each_pair: the receiver's share into `sums` (see tally()); with
  // `both`, j gets what tally() gives it from i -> j: the opposite force, the same half energy
  // and the same half virial (even in del). kEnergy / kVirial false: the op was given no energy
  // rows / no virial outputs, and their sums stay out of the loop (and out of registers it needs).
  template <bool kEnergy, bool kVirial>
  void tally_pair(ReceiverSums& sums, int j, bool both, double half_energy, double fpair, const double del[3]) const {
    if (kEnergy) sums.energy += half_energy;
    for (int c = 0; c < 3; ++c) sums.force[c] += del[c] * fpair;
    if (both) {
      if (kEnergy) energy[j] += half_energy;
      double* fj = forces + 3 * static_cast<std::size_t>(j);
      for (int c = 0; c < 3; ++c) fj[c] -= del[c] * fpair;
    }
    if (!kVirial || (!virial && !virial_rows)) return;
    const double h = 0.5 * fpair;
    const double v[6] = {h * del[0] * del[0], h * del[1] * del[1], h * del[2] * del[2],
                         h * del[0] * del[1], h * del[0] * del[2], h * del[1] * del[2]};
    for (int k = 0; k < 6; ++k) sums.virial[k] += v[k];
    if (!both) return;
    for (int k = 0; k < 6; ++k) sums.virial_both[k] += v[k];
    if (virial_rows)
      for (int k = 0; k < 6; ++k) virial_rows[6 * static_cast<std::size_t>(j) + k] += v[k];
  }

  // Adds receiver i's sums to its rows and to the global virial, and clears them.
  template <bool kEnergy, bool kVirial>
  void flush(int i, ReceiverSums& sums) const {
    if (kEnergy) energy[i] += sums.energy;
    double* fi = forces + 3 * static_cast<std::size_t>(i);
    for (int c = 0; c < 3; ++c) fi[c] += sums.force[c];
    if (!kVirial) {
      sums = ReceiverSums{};
      return;
    }
    if (virial)
      for (int k = 0; k < 6; ++k) virial[k] += sums.virial[k] + sums.virial_both[k];
    if (virial_rows)
      for (int k = 0; k < 6; ++k) virial_rows[6 * static_cast<std::size_t>(i) + k] += sums.virial[k];
    sums = ReceiverSums{};
  }

  // body(std::bool_constant<kEnergy>, std::bool_constant<kVirial>) with the flags these outputs
  // call for, so that a kernel is instantiated once per combination.
  template <class Body>
  void with_flags(Body&& body) const {
    const bool v = virial || virial_rows;
    if (energy && v) body(std::true_type{}, std::true_type{});
    else if (energy) body(std::true_type{}, std::false_type{});
    else if (v) body(std::false_type{}, std::true_type{});
    else body(std::false_type{}, std::false_type{});
  }
};

PairOutputs unpack_pair_outputs(const std::string& op, Span<const TensorRef> outs, std::size_t n_rows, bool with_virial);

// The threads a pair op of this call runs on (1 without the model's per-thread rows).
inline int call_threads(const EdgeCall& call) { return call.thread_rows ? usable_threads(call.threads) : 1; }

// walk(outs[t], r_begin, r_end) on thread t over its range of receivers.
template <class Out, class Walk>
void walk_ranges(const EdgeArgs& edges, const std::vector<Out>& outs, Walk& walk) {
  const int threads = static_cast<int>(outs.size());
  const std::vector<std::size_t> ranges = receiver_ranges(edges.offsets, edges.n_receivers, threads);
  run_threads(threads, [&](int t) {
    const auto k = static_cast<std::size_t>(t);
    walk(outs[k], ranges[k], ranges[k + 1]);
  });
}

// walk(out, r_begin, r_end) over the receivers on call.threads threads, each with outputs of
// its own (distspec/util/threads.h), summed into `o` afterwards; one call walk(o, 0, n) on one thread.
template <class Walk>
void walk_pairs(const EdgeArgs& edges, const PairOutputs& o, const EdgeCall& call, Walk&& walk) {
  const int threads = call_threads(call);
  if (threads == 1) {
    walk(o, std::size_t{0}, edges.n_receivers);
    return;
  }
  const std::size_t n = edges.n_rows;
  ThreadRows<double>& rows = *call.thread_rows;
  std::vector<PairOutputs> outs(static_cast<std::size_t>(threads));
  std::vector<double> virials(6 * static_cast<std::size_t>(threads), 0.0);
  for (int t = 0; t < threads; ++t) {
    PairOutputs& out = outs[static_cast<std::size_t>(t)];
    out.energy = rows.rows(t, 0, o.energy, n);
    out.forces = rows.rows(t, 1, o.forces, 3 * n);
    out.virial_rows = rows.rows(t, 2, o.virial_rows, 6 * n);
    out.virial = !o.virial ? nullptr : t == 0 ? o.virial : &virials[6 * static_cast<std::size_t>(t)];
  }
  walk_ranges(edges, outs, walk);
  rows.sum_into(threads, 0, o.energy, n);
  rows.sum_into(threads, 1, o.forces, 3 * n);
  rows.sum_into(threads, 2, o.virial_rows, 6 * n);
  if (o.virial)
    for (int t = 1; t < threads; ++t)
      for (int k = 0; k < 6; ++k) o.virial[k] += virials[6 * static_cast<std::size_t>(t) + k];
}

// The same for kernels that write one row array (EAM's density): walk(rows, r_begin, r_end).
template <class Walk>
void walk_row_pairs(const EdgeArgs& edges, double* out_rows, std::size_t width, const EdgeCall& call, Walk&& walk) {
  const int threads = call_threads(call);
  if (threads == 1) {
    walk(out_rows, std::size_t{0}, edges.n_receivers);
    return;
  }
  const std::size_t n = width * edges.n_rows;
  ThreadRows<double>& rows = *call.thread_rows;
  std::vector<double*> outs(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) outs[static_cast<std::size_t>(t)] = rows.rows(t, 3, out_rows, n);
  walk_ranges(edges, outs, walk);
  rows.sum_into(threads, 3, out_rows, n);
}

// Output TensorRefs for ModelOutputs in the PairOutputs layout; energy rows go to `energy_rows`
// (out.energy_rows or a scratch buffer of n_rows; empty: no energy).
std::vector<TensorRef> pair_output_refs(ModelOutputs& out, std::vector<double>& energy_rows, bool with_virial);

// Sum of the owned rows of a per-row energy.
double owned_energy(const std::vector<double>& energy_rows, std::size_t n_owned);
// This rank's share of the energy of a pair model: its owned rows, and under a half_newton_on
// list (or newton_on_ends) the halo rows too (pairs with halo atoms are computed on one rank).
double pair_energy(const std::vector<double>& energy_rows, const AtomGraph& graph);

}  // namespace distspec::models
