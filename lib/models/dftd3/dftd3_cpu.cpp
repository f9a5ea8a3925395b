// DFT-D3 on the CPU: the three passes of dftd3.h over a full edge list, on the request's threads
// (each receiver's rows are written by the thread that owns its range, so no thread copies).
#include <algorithm>
#include <cmath>

#include "distspec/error.h"
#include "distspec/util/threads.h"
#include "models/dftd3/dftd3.h"
#include "models/dftd3/dftd3_math.h"
#include "models/edge_kernel.h"
#include "models/model_file.h"

namespace distspec::models::dftd3 {
namespace {

constexpr char kName[] = "dftd3";

// Adds 1/2 del (x) del fpair (the pair's half of the virial) to v.
inline void add_half_virial(double* v, const double del[3], double fpair) {
  const double h = 0.5 * fpair;
  v[0] += h * del[0] * del[0];
  v[1] += h * del[1] * del[1];
  v[2] += h * del[2] * del[2];
  v[3] += h * del[0] * del[1];
  v[4] += h * del[0] * del[2];
  v[5] += h * del[1] * del[2];
}

class DFTD3Model final : public Model {
 public:
  DFTD3Model(ModelInfo info, Tables tables) : info_(std::move(info)), t_(std::move(tables)) {}

  const ModelInfo& info() const override { return info_; }

  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    const std::size_t n = graph.n_rows();
    out.reset(n, request);
    if (graph.edge_list != EdgeList::full)
      throw Error(model_error_id::op_args, "", std::string(kName) + " takes a full edge list, the host gave " +
                                                   edge_list_name(graph.edge_list));
    const std::vector<TensorRef> args = edge_args(graph);
    const EdgeCall call = edge_call(graph, index_checks_, request);
    edges_ = unpack_edge_args(kName, args, t_.n_species(), call);
    const int threads = loop_threads(usable_threads(request.threads), edges_.n_receivers, 256);
    ranges_ = receiver_ranges(graph.offsets, edges_.n_receivers, threads);
    partial_.assign(static_cast<std::size_t>(threads) * 7, 0.0);

    // CN_i of owned atoms, then of halo rows from their owners.
    cn_.assign(n, 0.0);
    run_threads(threads, [&](int th) { coordination_numbers(th); });
    dispatch.before_gather(Rows<double>{cn_.data(), n, 1});
    // The C6 weights of every row, halo rows included.
    weights();
    // Pair terms: energy, their forces and virial, dE/dCN_i of owned atoms.
    dedcn_.assign(n, 0.0);
    run_threads(threads, [&](int th) { pair_terms(th, request, out); });
    dispatch.before_gather(Rows<double>{dedcn_.data(), n, 1});
    // Coordination-number terms of the forces and virial.
    if (request.forces || request.virial || request.virial_rows)
      run_threads(threads, [&](int th) { cn_terms(th, request, out); });
    for (int th = 0; th < threads; ++th) {
      const double* p = &partial_[static_cast<std::size_t>(th) * 7];
      out.energy += p[0];
      for (int k = 0; k < 6; ++k) out.virial[static_cast<std::size_t>(k)] += p[1 + k];
    }
    if (!request.energy) out.energy = 0.0;
  }

 private:
  // f(r, i, j, del, rsq) for each edge j -> i of thread th's receivers.
  template <class F>
  void edges_of(int th, F&& f) const {
    edges_.for_each_edge(f, ranges_[static_cast<std::size_t>(th)], ranges_[static_cast<std::size_t>(th) + 1]);
  }

  void coordination_numbers(int th) {
    const double cut2 = t_.cn_cutoff * t_.cn_cutoff;
    edges_of(th, [&](int i, int j, const double*, double rsq) {
      if (!(rsq < cut2)) return;
      cn_[static_cast<std::size_t>(i)] +=
          count(t_.pair(edges_.species[i], edges_.species[j]).rcov, std::sqrt(rsq)).value;
    });
  }

  // w_a(CN) and dw_a/dCN per row (dftd3_math.h), halo rows included.
  void weights() {
    const std::size_t n = edges_.n_rows;
    w_.assign(n * kMaxReferences, 0.0);
    dw_.assign(n * kMaxReferences, 0.0);
    log_sum_.assign(n, 0.0);
    nearest_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const int s = edges_.species[i];
      if (s < 0) continue;
      const Tables::Element& e = t_.elements[static_cast<std::size_t>(s)];
      const RowWeights r = row_weights(cn_[i], e.cn.data(), e.n_references, &w_[i * kMaxReferences], &dw_[i * kMaxReferences]);
      log_sum_[i] = r.log_sum;
      nearest_[i] = r.nearest;
    }
  }

  // C6 = w_i^T C w_j and dC6/dCN_i = dw_i^T C w_j; or the nearest references' C6, constant,
  // where the pair's unnormalised weights sum below 1e-99 and the model falls back to it.
  double pair_c6(int i, int j, const Tables::Pair& pair, double& dc6) const {
    const std::size_t ii = static_cast<std::size_t>(i), jj = static_cast<std::size_t>(j);
    if (t_.nearest_reference_fallback && log_sum_[ii] + log_sum_[jj] <= kLogFallbackSum) {
      dc6 = 0.0;
      return pair.c6[static_cast<std::size_t>(nearest_[ii] * kMaxReferences + nearest_[jj])];
    }
    const int na = t_.elements[static_cast<std::size_t>(edges_.species[i])].n_references;
    const int nb = t_.elements[static_cast<std::size_t>(edges_.species[j])].n_references;
    return weighted_c6(pair.c6.data(), &w_[ii * kMaxReferences], &dw_[ii * kMaxReferences], &w_[jj * kMaxReferences], na,
                       nb, dc6);
  }

  void pair_terms(int th, const OutputRequest& request, ModelOutputs& out) {
    const double cut2 = t_.cutoff * t_.cutoff;
    double* partial = &partial_[static_cast<std::size_t>(th) * 7];
    const bool forces = request.forces || request.virial || request.virial_rows;
    edges_of(th, [&](int i, int j, const double* del, double rsq) {
      if (!(rsq < cut2)) return;
      const int s = edges_.species[i], u = edges_.species[j];
      const Tables::Pair& pair = t_.pair(s, u);
      double dc6 = 0.0;
      const double c6 = pair_c6(i, j, pair, dc6);
      const double r = std::sqrt(rsq);
      const PairTerm term = pair_term(t_.damping, pair.r0, pair.c8_over_c6, r);
      const std::size_t ii = static_cast<std::size_t>(i);
      dedcn_[ii] += term.g * dc6;
      const double half_e = 0.5 * c6 * term.g;
      partial[0] += half_e;  // receivers are owned rows
      if (request.energy_rows) out.energy_rows[ii] += half_e;
      if (!forces) return;
      // f_i = -de/dr del / r, the whole pair's (the edge i -> j gives j its own).
      const double fpair = -c6 * term.slope / r;
      tally(ii, del, fpair, request, out, partial);
    });
  }

  void cn_terms(int th, const OutputRequest& request, ModelOutputs& out) {
    const double cut2 = t_.cn_cutoff * t_.cn_cutoff;
    double* partial = &partial_[static_cast<std::size_t>(th) * 7];
    edges_of(th, [&](int i, int j, const double* del, double rsq) {
      if (!(rsq < cut2)) return;
      const double r = std::sqrt(rsq);
      const Count c = count(t_.pair(edges_.species[i], edges_.species[j]).rcov, r);
      const double fpair = -(dedcn_[static_cast<std::size_t>(i)] + dedcn_[static_cast<std::size_t>(j)]) * c.slope / r;
      tally(static_cast<std::size_t>(i), del, fpair, request, out, partial);
    });
  }

  void tally(std::size_t i, const double* del, double fpair, const OutputRequest& request, ModelOutputs& out,
             double* partial) const {
    double* f = &out.forces[3 * i];
    f[0] += del[0] * fpair;
    f[1] += del[1] * fpair;
    f[2] += del[2] * fpair;
    if (request.virial) add_half_virial(partial + 1, del, fpair);
    if (request.virial_rows) add_half_virial(&out.virial_rows[6 * i], del, fpair);
  }

  ModelInfo info_;
  Tables t_;
  IndexCheckSchedule index_checks_;
  // Per-step state, kept so that buffers reallocate only when the row count grows.
  EdgeArgs edges_;
  std::vector<std::size_t> ranges_;
  std::vector<double> cn_, dedcn_, w_, dw_;
  std::vector<double> log_sum_;  // per row: ln sum_a exp(-4 (CN - CN_a)^2)
  std::vector<int> nearest_;     // per row: the reference nearest CN
  std::vector<double> partial_;  // per thread: energy, virial (6)
};

}  // namespace

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  ModelInfo info = info_from(file);
  info.comm_width = 1;          // CN, then dE/dCN: one value per atom each
  info.halo_feature_reads = 2;  // the pair terms read CN_j, the CN terms dE/dCN_j
  info.plain_input_rows = true;  // nvalchemi's spec promotes nothing: no op reads wrapped inputs
  Tables tables = load_tables(file);
  if (device == Device::cuda) {
    if constexpr (kCudaBuild) return make_cuda_model(std::move(info), std::move(tables));
    throw_no_cuda("dftd3");
  }
  return std::make_unique<DFTD3Model>(std::move(info), std::move(tables));
}

}  // namespace distspec::models::dftd3
