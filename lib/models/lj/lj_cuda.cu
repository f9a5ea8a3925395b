// Lennard-Jones on the GPU: the kernels of lj_cpu.cpp (pair_lj_cut.cpp compute() over a full
// edge list) registered for Device::cuda, and the model that runs them on device copies of the
// graph. Same ops, same argument and output layouts as the CPU kernels (lj.h), with every
// TensorRef on the device.
#include "models/cuda/device_graph.cuh"
#include "models/cuda/device_outputs.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/pair_tally.cuh"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/edge_kernel.h"
#include "models/lj/lj.h"

namespace distspec::models::lj {
// The op state on the device (declared in lj.h): the coefficient table, and scratch for the
// global virial.
struct DeviceParams {
  int n_species = 0;
  cuda::DeviceArray<PairCoeff> coeffs;                // n_species^2, as Params::coeffs
  mutable cuda::DeviceArray<double> receiver_virial;  // n_receivers x 6
  mutable cuda::DeviceArray<double> sums;             // column-sum partials
};

namespace {

using namespace distspec::models::cuda;

// pair_lj_cut.cpp, one edge: E = r^-6 (lj3 r^-6 - lj4) - offset, fpair = r^-6 (lj1 r^-6 - lj2) / r^2.
// Per edge: 4 B sender index (streamed), x_j 24 B + species_j 4 B (gathered), one 48 B
// coefficient row (cached); 10 flops for the distance, 1 division and 11 flops for the pair,
// 7 for the tally and 13 more with the virial.
struct LJPair {
  const PairCoeff* coeffs;
  int n_species;
  __device__ bool operator()(int, int, int a, int b, double rsq, double& half_energy, double& fpair) const {
    const PairCoeff& c = coeffs[a * n_species + b];
    if (rsq >= c.cutsq) return false;
    const double r2inv = 1.0 / rsq;
    const double r6inv = r2inv * r2inv * r2inv;
    fpair = r6inv * (c.lj1 * r6inv - c.lj2) * r2inv;
    half_energy = 0.5 * (r6inv * (c.lj3 * r6inv - c.lj4) - c.offset);
    return true;
  }
};

template <bool kVirial>
void energy_forces(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceParams& p) {
  const char* op = kVirial ? kEnergyForcesVirialOp.qualname : kEnergyForcesOp.qualname;
  expect_count(op, "arguments", args.size(), kEdgeArgCount);
  PairTallyArgs a = unpack_device_edge_args(op, args);
  double* virial = unpack_device_pair_outputs(op, outs, kVirial ? 4 : 2, args[0].rows, a);
  if (a.n_receivers == 0) return;
  if (virial) {
    p.receiver_virial.resize(6 * a.n_receivers);
    a.receiver_virial = p.receiver_virial.data();
  }
  const double n_edges = double(args[4].rows), n_rec = double(a.n_receivers);
  const double streamed = n_edges * 4 + n_rec * (4 + 8 + 28 + 8 + 24 + (virial ? 48 : 0));
  {
    LaunchTimer timer("DistSpec::LJ::energy_forces", streamed, streamed + n_edges * 28,
                      n_edges * (kVirial ? 42 : 29));
    pair_tally_kernel<kPairLanes><<<grid_for(a.n_receivers, kPairBlock / kPairLanes), kPairBlock>>>(
        a, LJPair{p.coeffs.data(), p.n_species});
    check_launch("DistSpec::LJ::energy_forces");
  }
  if (virial) add_column_sums(a.receiver_virial, a.n_receivers, 6, virial, p.sums);
}

class LJCudaModel final : public Model {
 public:
  LJCudaModel(ModelInfo info, Params params) : info_(std::move(info)), params_(std::move(params)) {
    device_.n_species = params_.n_species;
    device_.coeffs.upload(params_.coeffs);
  }

  const ModelInfo& info() const override { return info_; }

  // Upload (positions; topology when it changed) -> one op on the device -> download.
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    require_cuda_dispatcher(dispatch, "lj");
    const std::size_t n = graph.n_rows();
    out.reset(n, request, request.rows_on_device);
    const bool virial = request.virial || request.virial_rows;
    const auto& op = virial ? kEnergyForcesVirialOp : kEnergyForcesOp;
    graph_.upload(graph, params_.n_species, std::string("op '") + op.qualname + "'", kOpArgsHint);
    energy_.resize(n);
    forces_.resize(3 * n);
    virial_.resize(6);
    virial_rows_.resize(request.virial_rows ? 6 * n : 0);
    for (auto* a : {&energy_, &forces_, &virial_, &virial_rows_}) a->zero();
    std::vector<TensorRef> outs{device_ref(energy_.data(), n), device_ref(forces_.data(), n, 3)};
    if (virial) {
      outs.push_back(device_ref(virial_.data(), 6));  // as the cpu model: the total with either virial
      outs.push_back(device_ref(virial_rows_.data(), request.virial_rows ? n : 0, 6));
    }
    dispatch.call(op, graph_.edge_args(), outs, device_);

    download_outputs({energy_, forces_, virial_, virial_rows_}, graph_.n_owned, n, request, virial, sums_, total_, out);
  }

 private:
  ModelInfo info_;
  Params params_;
  DeviceParams device_;
  DeviceGraph graph_;
  DeviceArray<double> energy_, forces_, virial_, virial_rows_, sums_, total_;
};

}  // namespace

void register_cuda_ops(OpRegistry& registry) {
  registry.add<Device::cuda>(kEnergyForcesOp, energy_forces<false>);
  registry.add<Device::cuda>(kEnergyForcesVirialOp, energy_forces<true>);
}

std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params) {
  return std::make_unique<LJCudaModel>(std::move(info), std::move(params));
}

}  // namespace distspec::models::lj
