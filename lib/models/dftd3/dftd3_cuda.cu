// DFT-D3 on the GPU: the three passes of dftd3.h as receiver-centric pair kernels
// (cuda/pair_tally.cuh) over a device copy of the graph, with the per-pair tables copied to the
// device once, when the model is made, and the two halo refreshes (CN, then dE/dCN) handed the
// device rows. The terms are dftd3_math.h's, shared with the CPU model; every sum has a fixed
// order, so a step is bitwise reproducible.
#include <string>
#include <vector>

#include "distspec/error.h"
#include "models/cuda/device_graph.cuh"
#include "models/cuda/device_outputs.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/pair_tally.cuh"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/dftd3/dftd3.h"
#include "models/dftd3/dftd3_math.h"
#include "models/edge_kernel.h"
#include "models/model_error.h"

namespace distspec::models::dftd3 {
namespace {

using namespace distspec::models::cuda;

constexpr int kPairC6 = kMaxReferences * kMaxReferences;

// What the kernels read, by value: the tables flattened per species and per pair of species
// (s * n_species + t), and the per-row state of the step.
struct View {
  FunctionalParameters damping{};
  double cutsq = 0.0, cn_cutsq = 0.0;
  int n_species = 0;
  bool nearest_reference_fallback = false;
  const int* n_references = nullptr;  // per species
  const double* ref_cn = nullptr;     // per species, kMaxReferences
  const double* pair_rcov = nullptr;  // per pair: rcov_s + rcov_t
  const double* pair_r0 = nullptr;
  const double* pair_q = nullptr;     // C8 / C6
  const double* pair_c6 = nullptr;    // per pair, kPairC6 (dftd3.h Tables::Pair::c6)
  // Per row.
  const double* cn = nullptr;
  const double* w = nullptr;   // kMaxReferences
  const double* dw = nullptr;  // kMaxReferences
  const double* log_sum = nullptr;
  const int* nearest = nullptr;
  const double* dedcn = nullptr;

  __device__ int pair(int a, int b) const { return a * n_species + b; }
};

// CN_i += sum over edges j -> i within the CN cutoff of the counting function (no forces: the
// shared pair kernel then adds zeros to the receiver's energy and forces, one row write each).
struct CoordinationPair {
  static constexpr bool kRowScalar = true;
  View v;
  __device__ bool operator()(int, int, int a, int b, double rsq, double&, double&, double& cn) const {
    if (rsq < v.cn_cutsq) cn += count(v.pair_rcov[v.pair(a, b)], sqrt(rsq)).value;
    return false;
  }
};

// The pair terms: half the energy to the receiver, the C6 part of the force, and dE/dCN_i.
struct DispersionPair {
  static constexpr bool kRowScalar = true;
  View v;
  __device__ bool operator()(int i, int j, int a, int b, double rsq, double& half_energy, double& fpair,
                             double& dedcn) const {
    if (!(rsq < v.cutsq)) return false;
    const int p = v.pair(a, b);
    double c6, dc6 = 0.0;
    if (v.nearest_reference_fallback && v.log_sum[i] + v.log_sum[j] <= kLogFallbackSum) {
      c6 = v.pair_c6[static_cast<std::size_t>(p) * kPairC6 + v.nearest[i] * kMaxReferences + v.nearest[j]];
    } else {
      const std::size_t wi = static_cast<std::size_t>(i) * kMaxReferences, wj = static_cast<std::size_t>(j) * kMaxReferences;
      c6 = weighted_c6(v.pair_c6 + static_cast<std::size_t>(p) * kPairC6, v.w + wi, v.dw + wi, v.w + wj,
                       v.n_references[a], v.n_references[b], dc6);
    }
    const double r = sqrt(rsq);
    const PairTerm term = pair_term(v.damping, v.pair_r0[p], v.pair_q[p], r);
    dedcn += term.g * dc6;
    half_energy = 0.5 * c6 * term.g;
    fpair = -c6 * term.slope / r;
    return true;
  }
};

// The coordination-number terms: (dE/dCN_i + dE/dCN_j) dCN/dr_ij, forces and virial only.
struct CoordinationForcePair {
  View v;
  __device__ bool operator()(int i, int j, int a, int b, double rsq, double& half_energy, double& fpair) const {
    if (!(rsq < v.cn_cutsq)) return false;
    const double r = sqrt(rsq);
    const Count c = count(v.pair_rcov[v.pair(a, b)], r);
    half_energy = 0.0;
    fpair = -(v.dedcn[i] + v.dedcn[j]) * c.slope / r;
    return true;
  }
};

// w, dw, ln sum and the nearest reference of every row (dftd3_math.h row_weights).
__global__ void weights_kernel(View v, const int* species, std::size_t n, double* w, double* dw, double* log_sum,
                               int* nearest) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const int s = species[i];
    if (s < 0) continue;
    const RowWeights r = row_weights(v.cn[i], v.ref_cn + static_cast<std::size_t>(s) * kMaxReferences,
                                     v.n_references[s], w + i * kMaxReferences, dw + i * kMaxReferences);
    log_sum[i] = r.log_sum;
    nearest[i] = r.nearest;
  }
}

template <class Pair>
void launch_pairs(const char* label, const PairTallyArgs& a, const Pair& pair, double n_edges, double flops_per_edge) {
  if (a.n_receivers == 0) return;
  const double streamed = n_edges * 4 + double(a.n_receivers) * 64;
  LaunchTimer timer(label, streamed, streamed + n_edges * 28, n_edges * flops_per_edge);
  pair_tally_kernel<kPairLanes><<<grid_for(a.n_receivers, kPairBlock / kPairLanes), kPairBlock>>>(a, pair);
  check_launch(label);
}

class DFTD3CudaModel final : public Model {
 public:
  DFTD3CudaModel(ModelInfo info, const Tables& t) : info_(std::move(info)), n_species_(t.n_species()) {
    std::vector<int> n_references;
    std::vector<double> ref_cn, rcov, r0, q, c6;
    for (const Tables::Element& e : t.elements) {
      n_references.push_back(e.n_references);
      ref_cn.insert(ref_cn.end(), e.cn.begin(), e.cn.end());
    }
    for (const Tables::Pair& p : t.pairs) {
      rcov.push_back(p.rcov);
      r0.push_back(p.r0);
      q.push_back(p.c8_over_c6);
      c6.insert(c6.end(), p.c6.begin(), p.c6.end());
    }
    n_references_.upload(n_references);
    ref_cn_.upload(ref_cn);
    pair_rcov_.upload(rcov);
    pair_r0_.upload(r0);
    pair_q_.upload(q);
    pair_c6_.upload(c6);
    view_.damping = t.damping;
    view_.damping.name = nullptr;  // a host string: kernels read the numbers only
    view_.cutsq = t.cutoff * t.cutoff;
    view_.cn_cutsq = t.cn_cutoff * t.cn_cutoff;
    view_.n_species = n_species_;
    view_.nearest_reference_fallback = t.nearest_reference_fallback;
    view_.n_references = n_references_.data();
    view_.ref_cn = ref_cn_.data();
    view_.pair_rcov = pair_rcov_.data();
    view_.pair_r0 = pair_r0_.data();
    view_.pair_q = pair_q_.data();
    view_.pair_c6 = pair_c6_.data();
  }

  const ModelInfo& info() const override { return info_; }

  // dftd3_cpu.cpp's compute with device rows: CN -> before_gather(CN) -> weights -> pair terms
  // -> before_gather(dE/dCN) -> CN terms.
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    require_cuda_dispatcher(dispatch, "dftd3");
    if (graph.edge_list != EdgeList::full)
      throw Error(model_error_id::op_args, "", std::string("dftd3 takes a full edge list, the host gave ") +
                                                   edge_list_name(graph.edge_list));
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request, request.rows_on_device);
    graph_.upload(graph, n_species_, "dftd3", kOpArgsHint);
    energy_.resize(n);
    forces_.resize(3 * n);
    virial_.resize(6);
    virial_rows_.resize(request.virial_rows ? 6 * n : 0);
    cn_.resize(n);
    dedcn_.resize(n);
    w_.resize(n * kMaxReferences);
    dw_.resize(n * kMaxReferences);
    log_sum_.resize(n);
    nearest_.resize(n);
    // Added into: the outputs, CN and dE/dCN. The weights are written for every row a kernel reads.
    for (auto* a : {&energy_, &forces_, &virial_, &virial_rows_, &cn_, &dedcn_}) a->zero();
    const std::vector<TensorRef> args = graph_.edge_args();
    PairTallyArgs a = unpack_device_edge_args("dftd3", args);
    a.energy = energy_.data();
    a.forces = forces_.data();
    const double n_edges = double(graph_.n_edges);

    // CN_i of owned atoms, then of halo rows from their owners.
    View v = view_;
    a.row_scalar = cn_.data();
    launch_pairs("DistSpec::DFTD3::coordination", a, CoordinationPair{v}, n_edges, 30);
    dispatch.before_gather(Rows<double>{cn_.data(), n, 1});
    // The C6 weights of every row, halo rows included.
    v.cn = cn_.data();
    if (n) {
      const double bytes = double(n) * 8 * (2 + 2 * kMaxReferences);
      LaunchTimer timer("DistSpec::DFTD3::weights", bytes, bytes, double(n) * 20 * kMaxReferences);
      weights_kernel<<<grid_for(n, 256), 256>>>(v, graph_.species.data(), n, w_.data(), dw_.data(), log_sum_.data(),
                                                nearest_.data());
      check_launch("DistSpec::DFTD3::weights");
    }
    v.w = w_.data();
    v.dw = dw_.data();
    v.log_sum = log_sum_.data();
    v.nearest = nearest_.data();

    // Pair terms: energy, their forces and virial, dE/dCN_i of owned atoms.
    const bool virial = request.virial || request.virial_rows;
    a.virial_rows = request.virial_rows ? virial_rows_.data() : nullptr;
    if (virial) {
      receiver_virial_.resize(6 * a.n_receivers);
      a.receiver_virial = receiver_virial_.data();
    }
    a.row_scalar = dedcn_.data();
    launch_pairs("DistSpec::DFTD3::pairs", a, DispersionPair{v}, n_edges, 150);
    if (virial && a.n_receivers) add_column_sums(a.receiver_virial, a.n_receivers, 6, virial_.data(), sums_);
    dispatch.before_gather(Rows<double>{dedcn_.data(), n, 1});

    // Coordination-number terms of the forces and virial.
    v.dedcn = dedcn_.data();
    a.row_scalar = nullptr;
    launch_pairs("DistSpec::DFTD3::coordination_forces", a, CoordinationForcePair{v}, n_edges, 45);
    if (virial && a.n_receivers) add_column_sums(a.receiver_virial, a.n_receivers, 6, virial_.data(), sums_);

    download_outputs({energy_, forces_, virial_, virial_rows_}, n_owned, n, request, virial, sums_, total_, out);
    if (!request.energy) out.energy = 0.0;
  }

 private:
  ModelInfo info_;
  int n_species_ = 0;
  View view_;
  DeviceArray<int> n_references_;
  DeviceArray<double> ref_cn_, pair_rcov_, pair_r0_, pair_q_, pair_c6_;
  DeviceGraph graph_;
  DeviceArray<double> energy_, forces_, virial_, virial_rows_, receiver_virial_, sums_, total_;
  DeviceArray<double> cn_, dedcn_, w_, dw_, log_sum_;
  DeviceArray<int> nearest_;
};

}  // namespace

std::unique_ptr<Model> make_cuda_model(ModelInfo info, Tables tables) {
  return std::make_unique<DFTD3CudaModel>(std::move(info), tables);
}

}  // namespace distspec::models::dftd3
