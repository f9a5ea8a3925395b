// EAM on the GPU: the three stages of eam_cpu.cpp (pair_eam.cpp compute() over a full edge
// list) registered for Device::cuda, and the model that runs them on device copies of the graph
// with the spline tables copied to the device once, when the model is made. Same ops, same
// argument and output layouts as the CPU kernels (eam.h), with every TensorRef on the device.
#include "models/cuda/device_graph.cuh"
#include "models/cuda/device_outputs.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/pair_tally.cuh"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/eam/eam.h"
#include "models/eam/eam_math.h"
#include "models/edge_kernel.h"
#include "models/model_error.h"

namespace distspec::models::eam {
namespace {

using namespace distspec::models::cuda;

// The tables a kernel reads, by value: each spline is (n + 1) rows of 7 coefficients, row 0
// unused (eam_tables.h), stacked per species (frho), per density table (rhor, picked by
// rhor_of as Tables::density_table) or per pair_index (z2r).
struct TableView {
  int n_species = 0, nr = 0, nrho = 0;
  double rdr = 0.0, rdrho = 0.0, rhomax = 0.0, cutsq = 0.0;
  const double* frho = nullptr;
  const double* rhor = nullptr;
  const int* rhor_of = nullptr;
  const double* z2r = nullptr;

  // The density an atom of species `from` gives one of species `at`.
  __device__ const double* rhor_row(int from, int at, int m) const {
    const int table = rhor_of[from * n_species + at];
    return rhor + (static_cast<std::size_t>(table) * (nr + 1) + m) * 7;
  }
  __device__ const double* z2r_row(int a, int b, int m) const {
    return z2r + (pair_index(a, b) * (nr + 1) + m) * 7;
  }
  __device__ void r_knot(double r, int& m, double& p) const { eam::r_knot(r, rdr, nr, m, p); }
};

}  // namespace

// The op state on the device (declared in eam.h, for the ops' handles).
struct DeviceTables {
  TableView view;
  cuda::DeviceArray<double> frho, rhor, z2r;
  cuda::DeviceArray<int> rhor_of;
  mutable cuda::DeviceArray<double> receiver_virial, sums;
};

namespace {

// The splines one after another; each must have `rows` rows (the grid the view indexes by).
std::vector<double> stack(const std::vector<Spline>& splines, std::size_t rows) {
  std::vector<double> out;
  for (const Spline& s : splines)
    if (s.size() != rows)
      throw Error(model_error_id::table, "", "eam: a spline of " + std::to_string(s.size()) + " rows on a grid of " +
                                                 std::to_string(rows - 1) + " points");
  for (const Spline& s : splines)
    for (const auto& row : s) out.insert(out.end(), row.begin(), row.end());
  return out;
}

// rho_i += sum over edges j -> i within the cutoff of rho_b(r_ij): TPA lanes per receiver.
// Per edge: 4 B sender (streamed), x_j 24 B + species_j 4 B (gathered), 32 B of one spline row
// (cached); 10 flops for the distance, a square root and 12 for the knot and the cubic.
template <int TPA>
__global__ void density_kernel(const PairTallyArgs a, const TableView t, double* rho) {
  const int lane = threadIdx.x & 31, sub = lane % TPA;
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t n_warps = (static_cast<std::size_t>(gridDim.x) * blockDim.x) >> 5;
  for (std::size_t s0 = warp * (32 / TPA); s0 < a.n_receivers; s0 += n_warps * (32 / TPA)) {
    const std::size_t s = s0 + lane / TPA;
    double sum = 0.0;
    int i = -1, at = -1;
    if (s < a.n_receivers) {
      i = a.receivers[s];
      at = a.species[i];
      if (at < 0) i = -1;
    }
    if (i >= 0) {
      const double xi0 = a.x[3 * i], xi1 = a.x[3 * i + 1], xi2 = a.x[3 * i + 2];
      for (int k = a.offsets[s] + sub; k < a.offsets[s + 1]; k += TPA) {
        const int j = a.senders[k];
        const int b = a.species[j];
        if (b < 0) continue;
        const double rsq = squared_norm_rn(xi0 - a.x[3 * j], xi1 - a.x[3 * j + 1], xi2 - a.x[3 * j + 2]);
        if (rsq >= t.cutsq) continue;
        int m;
        double p;
        t.r_knot(sqrt(rsq), m, p);
        sum += spline_value(t.rhor_row(b, at, m), p);
      }
    }
    sum = group_sum<TPA>(sum);
    if (sub == 0 && i >= 0) rho[i] += sum;
  }
}

// fp_i = F'_a(rho_i), energy_i += F_a(rho_i) (Tables::embedding); per row 8 + 4 B read, 16 B
// written, 24 B of one spline row, ~20 flops.
__global__ void embedding_kernel(const double* rho, const int* species, std::size_t n, const TableView t, double* fp,
                                 double* energy) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    fp[i] = 0.0;
    const int a = species[i];
    if (a < 0) continue;
    double slope;
    energy[i] += embedding_energy(t.frho + static_cast<std::size_t>(a) * (t.nrho + 1) * 7, t.nrho, t.rdrho,
                                  t.rhomax, rho[i], &slope);
    fp[i] = slope;
  }
}

// Pair force (eam_math.h pair_force), as eam_cpu.cpp.
// Per edge: 4 B sender (streamed), x_j 24 B + species_j 4 B + fp_j 8 B (gathered), three 24 B
// spline rows (cached); 10 flops for the distance, a square root, a division and ~35 flops for
// the knot, three cubics and psi', 7 for the tally and 13 more with the virial.
struct ForcePair {
  TableView t;
  const double* fp;
  __device__ bool operator()(int i, int j, int a, int b, double rsq, double& half_energy, double& fpair) const {
    if (rsq >= t.cutsq) return false;
    const double r = sqrt(rsq);
    int m;
    double p;
    t.r_knot(r, m, p);
    const double rhoip = spline_slope(t.rhor_row(a, b, m), p);
    const double rhojp = spline_slope(t.rhor_row(b, a, m), p);
    double phi;
    pair_force(t.z2r_row(a, b, m), p, r, fp[i], fp[j], rhoip, rhojp, phi, fpair);
    half_energy = 0.5 * phi;
    return true;
  }
};

void density(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceTables& t) {
  expect_count(kDensityOp.qualname, "arguments", args.size(), kEdgeArgCount);
  expect_count(kDensityOp.qualname, "outputs", outs.size(), 1);
  const PairTallyArgs a = unpack_device_edge_args(kDensityOp.qualname, args);
  double* rho = expect_f64(kDensityOp.qualname, "rho", 0, outs[0], args[0].rows, 1, false, Device::cuda);
  if (a.n_receivers == 0) return;
  const double n_edges = double(args[4].rows), streamed = n_edges * 4 + double(a.n_receivers) * (4 + 8 + 28 + 16);
  LaunchTimer timer("DistSpec::EAM::density", streamed, streamed + n_edges * 28, n_edges * 23);
  density_kernel<kPairLanes><<<grid_for(a.n_receivers, kPairBlock / kPairLanes), kPairBlock>>>(a, t.view, rho);
  check_launch("DistSpec::EAM::density");
}

void embedding(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceTables& t) {
  expect_count(kEmbeddingOp.qualname, "arguments", args.size(), 2);
  expect_count(kEmbeddingOp.qualname, "outputs", outs.size(), 2);
  const std::size_t n = args[0].rows;
  const double* rho = expect_f64(kEmbeddingOp.qualname, "rho", 0, args[0], n, 1, false, Device::cuda);
  const int* species = expect_i32(kEmbeddingOp.qualname, "species", 1, args[1], n, Device::cuda);
  double* fp = expect_f64(kEmbeddingOp.qualname, "fp", 0, outs[0], n, 1, false, Device::cuda);
  double* energy = expect_f64(kEmbeddingOp.qualname, "energy rows", 1, outs[1], n, 1, false, Device::cuda);
  if (n == 0) return;
  LaunchTimer timer("DistSpec::EAM::embedding", double(n) * 36, double(n) * 36, double(n) * 20);
  embedding_kernel<<<grid_for(n, 256), 256>>>(rho, species, n, t.view, fp, energy);
  check_launch("DistSpec::EAM::embedding");
}

void forces(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceTables& t) {
  expect_count(kForcesOp.qualname, "arguments", args.size(), kEdgeArgCount + 1);
  PairTallyArgs a = unpack_device_edge_args(kForcesOp.qualname, args);
  const std::size_t n_rows = args[0].rows;
  const double* fp = expect_f64(kForcesOp.qualname, "fp", kEdgeArgCount, args[kEdgeArgCount], n_rows, 1, false, Device::cuda);
  double* virial = unpack_device_pair_outputs(kForcesOp.qualname, outs, outs.size() > 2 ? 4 : 2, n_rows, a);
  if (a.n_receivers == 0) return;
  if (virial) {
    t.receiver_virial.resize(6 * a.n_receivers);
    a.receiver_virial = t.receiver_virial.data();
  }
  const double n_edges = double(args[4].rows);
  const double streamed = n_edges * 4 + double(a.n_receivers) * (4 + 8 + 36 + 8 + 24 + (virial ? 48 : 0));
  {
    LaunchTimer timer("DistSpec::EAM::forces", streamed, streamed + n_edges * 36, n_edges * (virial ? 70 : 57));
    pair_tally_kernel<kPairLanes><<<grid_for(a.n_receivers, kPairBlock / kPairLanes), kPairBlock>>>(
        a, ForcePair{t.view, fp});
    check_launch("DistSpec::EAM::forces");
  }
  if (virial) add_column_sums(a.receiver_virial, a.n_receivers, 6, virial, t.sums);
}

class EAMCudaModel final : public Model {
 public:
  EAMCudaModel(ModelInfo info, Tables tables) : info_(std::move(info)), tables_(std::move(tables)) {
    TableView& v = device_.view;
    v.n_species = tables_.n_species;
    v.nr = tables_.nr;
    v.nrho = tables_.nrho;
    v.rdr = tables_.rdr;
    v.rdrho = tables_.rdrho;
    v.rhomax = tables_.rhomax;
    v.cutsq = tables_.cutoff * tables_.cutoff;
    const std::size_t nr = static_cast<std::size_t>(v.nr) + 1, nrho = static_cast<std::size_t>(v.nrho) + 1;
    device_.frho.upload(stack(tables_.frho, nrho));
    device_.rhor.upload(stack(tables_.rhor, nr));
    device_.z2r.upload(stack(tables_.z2r, nr));
    device_.rhor_of.upload(tables_.rhor_of);
    v.frho = device_.frho.data();
    v.rhor = device_.rhor.data();
    v.rhor_of = device_.rhor_of.data();
    v.z2r = device_.z2r.data();
  }

  const ModelInfo& info() const override { return info_; }

  // eam.cpp's EAMModel::compute with device buffers over a full list: density -> embedding ->
  // before_gather(fp) -> forces; the halo exchange (one a step) sees device rows.
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    require_cuda_dispatcher(dispatch, "eam");
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request, request.rows_on_device);
    graph_.upload(graph, tables_.n_species, std::string("op '") + kDensityOp.qualname + "'", kOpArgsHint);
    energy_.resize(n);
    rho_.resize(n);
    fp_.resize(n);
    forces_.resize(3 * n);
    virial_.resize(6);
    virial_rows_.resize(request.virial_rows ? 6 * n : 0);
    for (auto* a : {&energy_, &rho_, &fp_, &forces_, &virial_, &virial_rows_}) a->zero();
    std::vector<TensorRef> args = graph_.edge_args();

    // rho_i of owned atoms, complete from their own edges (a full list): nothing to fold.
    dispatch.call(kDensityOp, args, {device_ref(rho_.data(), n)}, device_);
    // F(rho_i) and F'(rho_i) of owned atoms.
    dispatch.call(kEmbeddingOp, {device_ref(rho_.data(), n_owned), device_ref(graph_.species.data(), n_owned)},
                  {device_ref(fp_.data(), n_owned), device_ref(energy_.data(), n_owned)}, device_);
    // F' of halo rows from their owners, then pair forces on the receivers.
    dispatch.before_gather(Rows<double>{fp_.data(), n, 1});
    args.push_back(device_ref(fp_.data(), n));
    const bool virial = request.virial || request.virial_rows;
    std::vector<TensorRef> outs{device_ref(energy_.data(), n), device_ref(forces_.data(), n, 3)};
    if (virial) {
      outs.push_back(device_ref(virial_.data(), 6));  // as the cpu model: the total with either virial
      outs.push_back(device_ref(virial_rows_.data(), request.virial_rows ? n : 0, 6));
    }
    dispatch.call(kForcesOp, args, outs, device_);

    download_outputs({energy_, forces_, virial_, virial_rows_}, n_owned, n, request, virial, sums_, total_, out);
  }

 private:
  ModelInfo info_;
  Tables tables_;
  DeviceTables device_;
  DeviceGraph graph_;
  DeviceArray<double> energy_, rho_, fp_, forces_, virial_, virial_rows_, sums_, total_;
};

}  // namespace

void register_cuda_ops(OpRegistry& registry) {
  registry.add<Device::cuda>(kDensityOp, density);
  registry.add<Device::cuda>(kEmbeddingOp, embedding);
  registry.add<Device::cuda>(kForcesOp, forces);
}

std::unique_ptr<Model> make_cuda_model(ModelInfo info, Tables tables) {
  return std::make_unique<EAMCudaModel>(std::move(info), std::move(tables));
}

}  // namespace distspec::models::eam
