// Ewald on the GPU: the kernels of ewald_cpu.cpp registered for Device::cuda, and the model that
// runs them on device copies of the graph. Same ops, same argument and output layouts (ewald.h),
// with every TensorRef on the device; the per-pair and per-k terms are ewald_math.h's, shared
// with the CPU. Every sum runs in a fixed order (block trees, column sums), so a step is
// bitwise reproducible.
#include "models/cuda/device_graph.cuh"
#include "models/cuda/host_species_charges.cuh"
#include "models/cuda/device_outputs.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/pair_tally.cuh"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/edge_kernel.h"
#include "models/ewald/ewald.h"
#include "models/ewald/ewald_accuracy.h"
#include "models/ewald/ewald_cuda_state.cuh"
#include "models/ewald/ewald_kspace.h"
#include "models/ewald/ewald_math.h"
#include "models/ewald/ewald_op_args.h"
#include "models/system_derived.h"

namespace distspec::models::ewald {
namespace {

using namespace distspec::models::cuda;

constexpr unsigned kBlock = 256;


// Stage 1, one block per k-vector, and one more block for the total charge: the block's
// threads stride over the atoms, then a tree sum in shared memory. Per k-vector: n x (24 B
// position + 8 B charge) read (from L2 after the first k-vector), ~40 flops per atom with the
// sincos.
__global__ void structure_factor_kernel(const KSpaceArgs a, StructureFactorOutputs o) {
  __shared__ double re_s[kBlock], im_s[kBlock];
  const double alpha = a.alpha[0], volume = cell_volume(a.cell);
  for (std::size_t m = blockIdx.x; m <= a.n_k; m += gridDim.x) {
    const bool charge_only = m == a.n_k;
    const double* k = a.k + 3 * (charge_only ? 0 : m);
    double re = 0.0, im = 0.0;
    for (std::size_t i = threadIdx.x; i < a.n; i += kBlock) {
      if (charge_only) {
        re += a.q[i];
        continue;
      }
      const double* x = a.x + 3 * i;
      double s, c;
      sincos(k[0] * x[0] + k[1] * x[1] + k[2] * x[2], &s, &c);
      re += a.q[i] * c;
      im += a.q[i] * s;
    }
    re_s[threadIdx.x] = re;
    im_s[threadIdx.x] = im;
    __syncthreads();
    for (unsigned w = kBlock / 2; w > 0; w >>= 1) {
      if (threadIdx.x < w) {
        re_s[threadIdx.x] += re_s[threadIdx.x + w];
        im_s[threadIdx.x] += im_s[threadIdx.x + w];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (charge_only) {
        o.total_charge[0] = re_s[0];
      } else {
        const double g = green(k[0] * k[0] + k[1] * k[1] + k[2] * k[2], alpha, volume);
        o.real[m] = g * re_s[0];
        o.imag[m] = g * im_s[0];
      }
    }
    __syncthreads();
  }
}

// Stage 2, one thread per atom over every k-vector (the k-vectors and structure factor, 40 B
// per k, are read by every thread of a warp alike: broadcast loads from L1).
__global__ void reciprocal_kernel(const ReciprocalArgs r, double coulomb, double* row_virial) {
  const KSpaceArgs& a = r.in;
  const double alpha = a.alpha[0], volume = cell_volume(a.cell), total_charge = r.total_charge[0];
  const bool virial = row_virial || r.virial_rows;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < a.n; i += stride) {
    const double q = a.q[i];
    ReciprocalRow row;
    if (q != 0.0)
      for (std::size_t m = 0; m < a.n_k; ++m) row.add(a.x + 3 * i, a.k + 3 * m, r.real[m], r.imag[m], alpha, virial);
    if (q != 0.0) {
      r.energy[i] += reciprocal_energy(coulomb, q, row.phase, alpha, total_charge, volume);
      for (int d = 0; d < 3; ++d) r.forces[3 * i + d] += coulomb * q * row.field[d];
    }
    if (!virial) continue;
    for (int v = 0; v < 6; ++v) {
      const double w = q != 0.0 ? 0.5 * coulomb * q * row.virial[v] : 0.0;
      if (row_virial) row_virial[6 * i + v] = w;
      if (r.virial_rows) r.virial_rows[6 * i + v] += w;
    }
  }
}

// Real space, one edge: pair_coul_long.cpp's erfc pair (ewald_math.h). Per edge: 4 B sender
// index (streamed), x_j 24 B + species_j 4 B + q_j 8 B (gathered); ~30 flops and an exp (and
// erfc with the exact variant).
struct CoulombPair {
  const double* q;
  double coulomb, alpha, cutsq;
  bool polynomial;
  __device__ bool operator()(int i, int j, int, int, double rsq, double& half_energy, double& fpair) const {
    if (rsq >= cutsq) return false;
    const double qiqj = coulomb * q[i] * q[j];
    if (qiqj == 0.0) return false;
    double energy;
    real_space_pair(rsq, qiqj, alpha, polynomial, energy, fpair);
    half_energy = 0.5 * energy;
    return true;
  }
};

void structure_factors(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceParams&) {
  const KSpaceArgs a = unpack_kspace_args(kStructureFactorsOp.qualname, args, 5, Device::cuda);
  const StructureFactorOutputs o = unpack_structure_factor_outputs(outs, a.n_k, Device::cuda);
  const double n = double(a.n), k = double(a.n_k);
  LaunchTimer timer("DistSpec::Ewald::structure_factors", n * 32 + k * 40, n * k * 32, n * k * 40);
  structure_factor_kernel<<<grid_for(a.n_k + 1, 1), kBlock>>>(a, o);
  check_launch("DistSpec::Ewald::structure_factors");
}

void reciprocal(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceParams& p) {
  const ReciprocalArgs r = unpack_reciprocal(args, outs, Device::cuda);
  if (r.in.n == 0) return;
  double* row_virial = nullptr;
  if (r.virial) {
    p.row_virial.resize(6 * r.in.n);
    row_virial = p.row_virial.data();
  }
  {
    const double n = double(r.in.n), k = double(r.in.n_k);
    LaunchTimer timer("DistSpec::Ewald::reciprocal", n * (32 + 32 + (r.virial ? 48 : 0)) + k * 40, n * k * 40,
                      n * k * (r.virial ? 60 : 35));
    reciprocal_kernel<<<grid_for(r.in.n, 128), 128>>>(r, p.params.coulomb_constant, row_virial);
    check_launch("DistSpec::Ewald::reciprocal");
  }
  if (r.virial) add_column_sums(row_virial, r.in.n, 6, r.virial, p.sums);
}

void real_space(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceParams& p) {
  const char* op = kRealSpaceOp.qualname;
  expect_count(op, "arguments", args.size(), kEdgeArgCount + 1);
  PairTallyArgs a = unpack_device_edge_args(op, args);
  const std::size_t n_rows = args[0].rows;
  const double* q = expect_f64(op, "charges", kEdgeArgCount, args[kEdgeArgCount], n_rows, 1, false, Device::cuda);
  double* virial = unpack_device_pair_outputs(op, outs, 4, n_rows, a);
  if (a.n_receivers == 0) return;
  if (virial) {
    p.row_virial.resize(6 * a.n_receivers);
    a.receiver_virial = p.row_virial.data();
  }
  const Params& c = p.params;
  {
    const double n_edges = double(args[4].rows), n_rec = double(a.n_receivers);
    const double streamed = n_edges * 4 + n_rec * (4 + 8 + 36 + 8 + 24 + (virial ? 48 : 0));
    LaunchTimer timer("DistSpec::Ewald::real_space", streamed, streamed + n_edges * 36, n_edges * (virial ? 50 : 37));
    pair_tally_kernel<kPairLanes><<<grid_for(a.n_receivers, kPairBlock / kPairLanes), kPairBlock>>>(
        a, CoulombPair{q, c.coulomb_constant, c.alpha, c.cutsq, c.erfc == Erfc::lammps_polynomial});
    check_launch("DistSpec::Ewald::real_space");
  }
  if (virial) add_column_sums(a.receiver_virial, a.n_receivers, 6, virial, p.sums);
}

// The model on the GPU: the CPU model's steps (ewald.cpp), its arrays on the device.
class EwaldCudaModel final : public Model, public SystemDerived {
 public:
  EwaldCudaModel(ModelInfo info, Params params) : info_(std::move(info)), accuracy_(params) {
    device_.params = params;
  }

  const ModelInfo& info() const override { return info_; }
  void begin_run() override { accuracy_.begin_run(); }
  std::string take_report() override { return accuracy_.take_report(device_.params, kvectors_.count()); }

  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    require_cuda_dispatcher(dispatch, "ewald");
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request, request.rows_on_device);
    // alpha and kmax as the CPU model has them (ewald_accuracy.h, on the host).
    check_cell(graph);
    const AtomGraph& host_graph = host_rows_.view(graph);
    model_charges(host_graph, host_charges_);
    accuracy_.prepare(host_graph, host_charges_, dispatch, device_.params);
    if (device_.params.alpha != uploaded_alpha_) {
      alpha_.upload(&device_.params.alpha, 1);
      uploaded_alpha_ = device_.params.alpha;
    }
    kvectors_.update(graph, device_.params.kmax);
    if (kvectors_.changed()) {
      cell_.upload(kvectors_.cell().data(), 9);
      k_.upload(kvectors_.vectors());
    }
    const std::size_t n_k = kvectors_.count();
    charges_.upload(host_charges_);
    graph_.upload(graph, device_.params.n_species, std::string("op '") + kRealSpaceOp.qualname + "'", kOpArgsHint);

    // Stage 1 (slice_owned and all_reduce_sum by the spec), then the neutrality check.
    real_sf_.resize(n_k);
    imag_sf_.resize(n_k);
    total_.resize(1);
    std::vector<TensorRef> kspace{device_ref(graph_.x.data(), n, 3), device_ref(charges_.data(), n),
                                  device_ref(cell_.data(), 3, 3), device_ref(k_.data(), n_k, 3),
                                  device_ref(alpha_.data(), 1)};
    dispatch.call(kStructureFactorsOp, kspace,
                  {device_ref(real_sf_.data(), n_k), device_ref(imag_sf_.data(), n_k), device_ref(total_.data(), 1)},
                  device_);
    double total_charge = 0.0;
    total_.download(&total_charge, 1);
    check_neutral(total_charge);

    // Stage 2 on the owned rows, then real space.
    energy_.resize(n);
    forces_.resize(3 * n);
    virial_.resize(6);
    virial_rows_.resize(request.virial_rows ? 6 * n : 0);
    for (auto* a : {&energy_, &forces_, &virial_, &virial_rows_}) a->zero();
    const bool virial = request.virial || request.virial_rows;
    kspace[0].rows = kspace[1].rows = n_owned;
    std::vector<TensorRef> args = kspace;
    args.insert(args.end(), {device_ref(real_sf_.data(), n_k), device_ref(imag_sf_.data(), n_k), device_ref(total_.data(), 1)});
    dispatch.call(kReciprocalOp, args,
                  {device_ref(energy_.data(), n_owned), device_ref(forces_.data(), n_owned, 3),
                   device_ref(virial_.data(), virial ? 6 : 0),
                   device_ref(virial_rows_.data(), request.virial_rows ? n_owned : 0, 6)},
                  device_);
    std::vector<TensorRef> edges = graph_.edge_args();
    edges.push_back(device_ref(charges_.data(), n));
    dispatch.call(kRealSpaceOp, edges,
                  {device_ref(energy_.data(), n), device_ref(forces_.data(), n, 3), device_ref(virial_.data(), virial ? 6 : 0),
                   device_ref(virial_rows_.data(), request.virial_rows ? n : 0, 6)},
                  device_);

    download_outputs({energy_, forces_, virial_, virial_rows_}, n_owned, n, request, virial, sums_, energy_total_, out);
  }

 private:
  ModelInfo info_;
  DeviceParams device_;
  AccuracyRule accuracy_;
  double uploaded_alpha_ = 0.0;  // alpha_ holds it (0: nothing uploaded yet)
  KVectors kvectors_;
  std::vector<double> host_charges_;
  HostSpeciesCharges host_rows_;  // species and charges where the host checks read them
  DeviceGraph graph_;
  DeviceArray<double> alpha_, cell_, k_, charges_, real_sf_, imag_sf_, total_;
  DeviceArray<double> energy_, forces_, virial_, virial_rows_, sums_, energy_total_;
};

}  // namespace

void register_cuda_ops(OpRegistry& registry) {
  registry.add<Device::cuda>(kStructureFactorsOp, structure_factors);
  registry.add<Device::cuda>(kReciprocalOp, reciprocal);
  registry.add<Device::cuda>(kRealSpaceOp, real_space);
}

std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params) {
  return std::make_unique<EwaldCudaModel>(std::move(info), params);
}

}  // namespace distspec::models::ewald
