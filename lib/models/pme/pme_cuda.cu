// PME on the GPU: the kernels of pme_cpu.cpp registered for Device::cuda, and the model that runs
// them on device copies of the graph. Same ops, same layouts (pme.h), every per-row and mesh
// tensor on the device; the B-spline and Green terms are pme_math.h's, shared with the CPU. The
// FFTs are cuFFT's (double precision, real to complex and back, unnormalised as FFTW's). The
// spread adds into the mesh with atomics, so its sums are not in a fixed order: a step is
// reproducible to rounding, not bitwise.
#include <cufft.h>

#include <string>
#include <vector>

#include "distspec/error.h"
#include "models/cuda/check.cuh"
#include "models/cuda/device_graph.cuh"
#include "models/cuda/host_species_charges.cuh"
#include "models/cuda/device_outputs.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda/reductions.cuh"
#include "models/cuda/require_cuda_dispatcher.cuh"
#include "models/edge_kernel.h"
#include "models/ewald/ewald_cuda_state.cuh"
#include "models/ewald/ewald_kspace.h"
#include "models/model_error.h"
#include "models/pme/pme.h"
#include "models/pme/pme_accuracy.h"
#include "models/pme/pme_math.h"
#include "models/pme/pme_moduli.h"
#include "models/pme/pme_op_args.h"
#include "models/pme/pme_system.h"
#include "models/system_derived.h"

namespace distspec::models::pme {
namespace {

using namespace distspec::models::cuda;

void check_fft(cufftResult status, const char* what) {
  if (status != CUFFT_SUCCESS)
    throw Error(model_error_id::device, "", std::string("pme: ") + what + " failed (cuFFT status " +
                                                std::to_string(static_cast<int>(status)) + ")",
                "a smaller mesh (a larger accuracy), or a GPU with more free memory");
}

// cuFFT plans and the half spectrum, made once per mesh size.
class DeviceFft {
 public:
  ~DeviceFft() { destroy(); }
  void resize(const std::array<int, 3>& mesh) {
    if (planned_ && mesh == mesh_) return;
    destroy();
    check_fft(cufftPlan3d(&forward_, mesh[0], mesh[1], mesh[2], CUFFT_D2Z), "cufftPlan3d (D2Z)");
    check_fft(cufftPlan3d(&backward_, mesh[0], mesh[1], mesh[2], CUFFT_Z2D), "cufftPlan3d (Z2D)");
    spectrum.resize(2 * static_cast<std::size_t>(mesh[0]) * mesh[1] * (mesh[2] / 2 + 1));
    mesh_ = mesh;
    planned_ = true;
  }
  void forward(double* real) {
    check_fft(cufftExecD2Z(forward_, real, reinterpret_cast<cufftDoubleComplex*>(spectrum.data())), "cufftExecD2Z");
  }
  // Into `real`; the spectrum is overwritten.
  void backward(double* real) {
    check_fft(cufftExecZ2D(backward_, reinterpret_cast<cufftDoubleComplex*>(spectrum.data()), real), "cufftExecZ2D");
  }
  DeviceArray<double> spectrum;  // interleaved re, im

 private:
  void destroy() {
    if (!planned_) return;
    cufftDestroy(forward_);
    cufftDestroy(backward_);
    planned_ = false;
  }
  bool planned_ = false;
  std::array<int, 3> mesh_{};
  cufftHandle forward_ = 0, backward_ = 0;
};

}  // namespace

// What the CUDA ops are called with (declared in pme.h): the constants and the model's device
// scratch.
struct DeviceState {
  Params params;
  mutable DeviceFft fft;
  mutable cuda::DeviceArray<double> moduli;  // K1 + K2 + K3
  mutable cuda::DeviceArray<double> spectrum_copy, kernel, point_sums, sums, scratch;
  mutable std::array<int, 3> moduli_mesh{};
  mutable int moduli_order = 0;
};

namespace {

struct MeshDims {
  int k[3];
  int order;
};

__device__ inline void atom_splines(const double* x, const double* inv_t, const MeshDims m, AxisSpline* axis) {
  for (int d = 0; d < 3; ++d) {
    const double s = inv_t[3 * d] * x[0] + inv_t[3 * d + 1] * x[1] + inv_t[3 * d + 2] * x[2];
    axis[d].set(s, m.k[d], m.order);
  }
}

// The atom of a one-thread-per-atom kernel: its row i, charge q and B-splines; false past the
// last atom and for uncharged ones (atoms of other species, NULL types), which add nothing.
__device__ inline bool charged_atom(const AtomArgs& a, const MeshDims m, std::size_t& i, double& q, AxisSpline* axis) {
  i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= a.n) return false;
  q = a.q[i];
  if (q == 0.0) return false;
  atom_splines(a.x + 3 * i, a.inv_t, m, axis);
  return true;
}

// One thread per atom: q times its p^3 weights, added into the mesh.
__global__ void spread_kernel(const SpreadArgs a, const MeshDims m) {
  std::size_t i;
  double q;
  AxisSpline axis[3];
  if (!charged_atom(a, m, i, q, axis)) return;
  for (int u = 0; u < m.order; ++u) {
    const std::size_t iu = static_cast<std::size_t>(AxisSpline::index(axis[0].base, u, m.k[0])) * m.k[1];
    for (int v = 0; v < m.order; ++v) {
      const std::size_t iuv = (iu + AxisSpline::index(axis[1].base, v, m.k[1])) * m.k[2];
      const double wuv = q * axis[0].weight[u] * axis[1].weight[v];
      for (int w = 0; w < m.order; ++w)
        atomicAdd(a.mesh + iuv + AxisSpline::index(axis[2].base, w, m.k[2]), wuv * axis[2].weight[w]);
    }
  }
}

// Per half-spectrum point: G(m) B(m) times Q^(m) in place, and the point's virial terms (6
// columns, weighted for the mirror half), its kernel kept for the virial meshes when asked.
__global__ void green_kernel(double* spectrum, const double* inv_t, const double* moduli, const MeshDims m,
                             double alpha, double volume, double* point_sums, double* kernel, double* spectrum_copy) {
  const int half = m.k[2] / 2 + 1;
  const std::size_t total = static_cast<std::size_t>(m.k[0]) * m.k[1] * half;
  const std::size_t at = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (at >= total) return;
  const int n3 = static_cast<int>(at % half);
  const int n2 = static_cast<int>((at / half) % m.k[1]);
  const int n1 = static_cast<int>(at / (static_cast<std::size_t>(half) * m.k[1]));
  const int n[3] = {n1, n2, n3};
  double v[6];
  const double bsp = moduli[n1] * moduli[m.k[0] + n2] * moduli[m.k[0] + m.k[1] + n3];
  const double g = green_at(inv_t, n, m.k, bsp, alpha, volume, v);
  const double weight = (n3 == 0 || 2 * n3 == m.k[2]) ? 1.0 : 2.0;
  const double re = spectrum[2 * at], im = spectrum[2 * at + 1];
  const double power = re * re + im * im;
  for (int c = 0; c < 6; ++c) point_sums[6 * at + c] = weight * v[c] * power;
  if (kernel) {
    for (int c = 0; c < 6; ++c) kernel[6 * at + c] = v[c];
    spectrum_copy[2 * at] = re;
    spectrum_copy[2 * at + 1] = im;
  }
  spectrum[2 * at] = g * re;
  spectrum[2 * at + 1] = g * im;
}

__global__ void virial_spectrum_kernel(double* spectrum, const double* spectrum_copy, const double* kernel, int c,
                                       std::size_t total) {
  const std::size_t at = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (at >= total) return;
  const double k = kernel[6 * at + c];
  spectrum[2 * at] = spectrum_copy[2 * at] * k;
  spectrum[2 * at + 1] = spectrum_copy[2 * at + 1] * k;
}

// One thread per atom: its potential, field and virial share from the meshes.
__global__ void interpolate_kernel(const InterpolateArgs a, const MeshDims m, double c, double alpha, double total,
                                   double volume) {
  std::size_t i;
  double q;
  AxisSpline axis[3];
  if (!charged_atom(a, m, i, q, axis)) return;
  const std::size_t points = static_cast<std::size_t>(m.k[0]) * m.k[1] * m.k[2];
  double phi = 0.0, dphi[3] = {0.0, 0.0, 0.0}, psi[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  for (int u = 0; u < m.order; ++u) {
    const std::size_t iu = static_cast<std::size_t>(AxisSpline::index(axis[0].base, u, m.k[0])) * m.k[1];
    for (int v = 0; v < m.order; ++v) {
      const std::size_t iuv = (iu + AxisSpline::index(axis[1].base, v, m.k[1])) * m.k[2];
      const double wuv = axis[0].weight[u] * axis[1].weight[v];
      const double du = axis[0].slope[u] * axis[1].weight[v], dv = axis[0].weight[u] * axis[1].slope[v];
      for (int w = 0; w < m.order; ++w) {
        const std::size_t g = iuv + AxisSpline::index(axis[2].base, w, m.k[2]);
        const double p = a.potential[g], ww = axis[2].weight[w];
        phi += wuv * ww * p;
        dphi[0] += du * ww * p;
        dphi[1] += dv * ww * p;
        dphi[2] += wuv * axis[2].slope[w] * p;
        if (a.virial_rows)
          for (int s = 0; s < 6; ++s) psi[s] += wuv * ww * a.virial_meshes[points * s + g];
      }
    }
  }
  for (int x = 0; x < 3; ++x) {
    double field = 0.0;
    for (int d = 0; d < 3; ++d) field += dphi[d] * m.k[d] * a.inv_t[3 * d + x];
    a.forces[3 * i + x] -= c * q * field;
  }
  a.energy[i] += c * (0.5 * q * phi - alpha * q * q / kSqrtPi - 0.5 * kPi * q * total / (alpha * alpha * volume));
  if (a.virial_rows)
    for (int s = 0; s < 6; ++s) a.virial_rows[6 * i + s] += 0.5 * c * q * psi[s];
}

MeshDims dims_of(const Params& p) { return MeshDims{{p.mesh[0], p.mesh[1], p.mesh[2]}, p.order}; }


void spread(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceState& s) {
  const SpreadArgs a = unpack_spread(args, outs, s.params, Device::cuda);
  check(cudaMemsetAsync(a.mesh, 0, s.params.mesh_points() * sizeof(double)), "cudaMemsetAsync (mesh)");
  if (a.n == 0) return;
  LaunchTimer timer("DistSpec::PME::spread", a.n * 32.0, a.n * 8.0 * s.params.order * s.params.order * s.params.order,
                    a.n * 3.0 * s.params.order * s.params.order * s.params.order);
  spread_kernel<<<grid_for(a.n, 128), 128>>>(a, dims_of(s.params));
  check_launch("DistSpec::PME::spread");
}

// The sum of the charges, into a device scalar (the spec all-reduces it).
__global__ void sum_kernel(const double* q, std::size_t n, double* out) {
  __shared__ double part[256];
  double v = 0.0;
  for (std::size_t i = threadIdx.x; i < n; i += 256) v += q[i];
  part[threadIdx.x] = v;
  __syncthreads();
  for (unsigned w = 128; w > 0; w >>= 1) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = part[0];
}

void total_charge(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceState&) {
  const char* op = kTotalChargeOp.qualname;
  expect_count(op, "arguments", args.size(), 1);
  expect_count(op, "outputs", outs.size(), 1);
  const std::size_t n = args[0].rows;
  const double* q = expect_f64(op, "charges", 0, args[0], n, 1, false, Device::cuda);
  double* out = expect_f64(op, "total charge", 0, outs[0], 1, 1, false, Device::cuda);
  sum_kernel<<<1, 256>>>(q, n, out);
  check_launch("DistSpec::PME::total_charge");
}

void solve(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceState& s) {
  const Params& p = s.params;
  const SolveArgs a = unpack_solve(args, outs, p, Device::cuda);
  const MeshDims m = dims_of(p);
  const std::size_t k = p.mesh_points();
  if (s.moduli_mesh != p.mesh || s.moduli_order != p.order) {
    s.moduli.upload(mesh_moduli(p.order, p.mesh.data()));
    s.moduli_mesh = p.mesh;
    s.moduli_order = p.order;
  }
  double inv_t_host[9];
  check(cudaMemcpy(inv_t_host, a.inv_t, sizeof inv_t_host, cudaMemcpyDefault), "cudaMemcpy (cell)");
  const double volume = 1.0 / abs_det(inv_t_host);
  s.fft.resize(p.mesh);
  // cuFFT's D2Z may overwrite its input: transform a copy (the potential mesh, rewritten below).
  check(cudaMemcpy(a.potential, a.mesh, k * sizeof(double), cudaMemcpyDeviceToDevice), "cudaMemcpy (mesh)");
  s.fft.forward(a.potential);
  const std::size_t n_spectrum = static_cast<std::size_t>(p.mesh[0]) * p.mesh[1] * (p.mesh[2] / 2 + 1);
  s.point_sums.resize(6 * n_spectrum);
  double* kernel = nullptr;
  double* copy = nullptr;
  if (a.virial_meshes) {
    s.kernel.resize(6 * n_spectrum);
    s.spectrum_copy.resize(2 * n_spectrum);
    kernel = s.kernel.data();
    copy = s.spectrum_copy.data();
  }
  {
    LaunchTimer timer("DistSpec::PME::green", n_spectrum * 16.0, n_spectrum * (16.0 + 56), n_spectrum * 80.0);
    green_kernel<<<grid_for(n_spectrum, 256), 256>>>(s.fft.spectrum.data(), a.inv_t, s.moduli.data(), m, a.alpha[0],
                                                     volume, s.point_sums.data(), kernel, copy);
    check_launch("DistSpec::PME::green");
  }
  s.sums.resize(6);
  add_column_sums(s.point_sums.data(), n_spectrum, 6, s.sums.data(), s.scratch);
  double sums[6];
  s.sums.download(sums, 6);
  for (int c = 0; c < 6; ++c) a.virial[c] = 0.5 * sums[c];
  s.fft.backward(a.potential);
  if (!a.virial_meshes) return;
  for (int c = 0; c < 6; ++c) {
    virial_spectrum_kernel<<<grid_for(n_spectrum, 256), 256>>>(s.fft.spectrum.data(), copy, kernel, c, n_spectrum);
    check_launch("DistSpec::PME::virial_spectrum");
    s.fft.backward(a.virial_meshes + k * static_cast<std::size_t>(c));
  }
}

void interpolate(Span<const TensorRef> args, Span<const TensorRef> outs, const DeviceState& s) {
  const InterpolateArgs a = unpack_interpolate(args, outs, s.params, Device::cuda);
  if (a.n == 0) return;
  double inv_t_host[9];
  check(cudaMemcpy(inv_t_host, a.inv_t, sizeof inv_t_host, cudaMemcpyDefault), "cudaMemcpy (cell)");
  const int p3 = s.params.order * s.params.order * s.params.order;
  LaunchTimer timer("DistSpec::PME::interpolate", a.n * 80.0, a.n * 8.0 * p3 * (a.virial_rows ? 7 : 1),
                    a.n * 8.0 * p3);
  interpolate_kernel<<<grid_for(a.n, 128), 128>>>(a, dims_of(s.params), s.params.coulomb_constant, a.alpha[0],
                                                   a.total_charge[0], 1.0 / abs_det(inv_t_host));
  check_launch("DistSpec::PME::interpolate");
}

// The model on the GPU: the CPU model's steps (pme.cpp), its arrays on the device.
class PmeCudaModel final : public Model, public SystemDerived {
 public:
  PmeCudaModel(ModelInfo info, Params params) : info_(std::move(info)) {
    state_.params = params;
    real_space_.params = params.real_space;
  }

  const ModelInfo& info() const override { return info_; }
  void begin_run() override { rule_.begin_run(); }
  std::string take_report() override { return rule_.take_report(state_.params); }

  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    require_cuda_dispatcher(dispatch, "pme");
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request, request.rows_on_device);
    check_cell(graph);
    const AtomGraph& host_graph = host_rows_.view(graph);
    ewald::model_charges(host_graph, host_charges_);
    rule_.prepare(host_graph, host_charges_, dispatch, state_.params);
    check_mesh(state_.params);
    real_space_.params.alpha = state_.params.alpha;
    const std::array<double, 9> inv_t = cell_inv_t(graph.cell);
    cell_.upload(inv_t.data(), 9);
    charges_.upload(host_charges_);
    graph_.upload(graph, state_.params.n_species, std::string("op '") + ewald::kRealSpaceOp.qualname + "'", kOpArgsHint);
    const std::size_t k = state_.params.mesh_points();
    const double alpha = state_.params.alpha;

    mesh_.resize(k);
    total_.resize(1);
    const TensorRef cell = device_ref(cell_.data(), 3, 3);
    dispatch.call(kSpreadOp, {device_ref(graph_.x.data(), n, 3), device_ref(charges_.data(), n), cell},
                  {device_ref(mesh_.data(), k)}, state_);
    dispatch.call(kTotalChargeOp, {device_ref(charges_.data(), n)}, {device_ref(total_.data(), 1)}, state_);
    double total_charge = 0.0;
    total_.download(&total_charge, 1);

    potential_.resize(k);
    virial_meshes_.resize(request.virial_rows ? 6 * k : 0);
    std::array<double, 6> recip_virial{};
    dispatch.call(kSolveOp, {device_ref(mesh_.data(), k), cell, TensorRef::of(&alpha, 1)},
                  {device_ref(potential_.data(), k), TensorRef::of(recip_virial.data(), 6),
                   device_ref(virial_meshes_.data(), request.virial_rows ? 6 : 0, k)},
                  state_);

    energy_.resize(n);
    forces_.resize(3 * n);
    virial_.resize(6);
    virial_rows_.resize(request.virial_rows ? 6 * n : 0);
    for (auto* a : {&energy_, &forces_, &virial_, &virial_rows_}) a->zero();
    dispatch.call(kInterpolateOp,
                  {device_ref(graph_.x.data(), n_owned, 3), device_ref(charges_.data(), n_owned), cell,
                   device_ref(potential_.data(), k), device_ref(virial_meshes_.data(), request.virial_rows ? 6 : 0, k),
                   TensorRef::of(&total_charge, 1), TensorRef::of(&alpha, 1)},
                  {device_ref(energy_.data(), n_owned), device_ref(forces_.data(), n_owned, 3),
                   device_ref(virial_rows_.data(), request.virial_rows ? n_owned : 0, 6)},
                  state_);
    const bool virial = request.virial || request.virial_rows;
    std::vector<TensorRef> edges = graph_.edge_args();
    edges.push_back(device_ref(charges_.data(), n));
    dispatch.call(ewald::kRealSpaceOp, edges,
                  {device_ref(energy_.data(), n), device_ref(forces_.data(), n, 3), device_ref(virial_.data(), virial ? 6 : 0),
                   device_ref(virial_rows_.data(), request.virial_rows ? n : 0, 6)},
                  real_space_);
    download_outputs({energy_, forces_, virial_, virial_rows_}, n_owned, n, request, virial, sums_, energy_total_, out);
    // The k-space virial every rank computed alike: this rank's share of the model's atoms.
    if (request.virial) {
      OutputRequest share = request;
      share.virial_rows = false;
      add_virial_share(host_graph, share, recip_virial, rule_.natoms(), state_.params.coulomb_constant, out);
    }
  }

 private:
  ModelInfo info_;
  DeviceState state_;
  ewald::DeviceParams real_space_;
  SystemRule rule_;
  std::vector<double> host_charges_;
  HostSpeciesCharges host_rows_;  // species and charges where the host checks read them
  DeviceGraph graph_;
  DeviceArray<double> cell_, charges_, mesh_, total_, potential_, virial_meshes_;
  DeviceArray<double> energy_, forces_, virial_, virial_rows_, sums_, energy_total_;
};

}  // namespace

void register_cuda_ops(OpRegistry& registry) {
  registry.add<Device::cuda>(kSpreadOp, spread);
  registry.add<Device::cuda>(kTotalChargeOp, total_charge);
  registry.add<Device::cuda>(kSolveOp, solve);
  registry.add<Device::cuda>(kInterpolateOp, interpolate);
  ewald::register_cuda_ops(registry);
}

std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params) {
  return std::make_unique<PmeCudaModel>(std::move(info), params);
}

}  // namespace distspec::models::pme
