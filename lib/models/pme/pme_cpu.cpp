// PME kernels on the CPU: the B-spline spread of the rows given onto the mesh (each thread into a
// mesh of its own, summed in thread order), the total charge, the reciprocal-space solve (FFTW3:
// forward FFT, Green function times moduli, the virial, inverse FFTs) and the
// interpolation of each row's potential, field and virial share back from the mesh.
#include <algorithm>
#include <complex>
#include <vector>

#include "models/edge_kernel.h"
#include "models/pme/pme.h"
#include "models/pme/pme_fft.h"
#include "models/pme/pme_math.h"
#include "models/pme/pme_moduli.h"
#include "models/pme/pme_op_args.h"

namespace distspec::models::pme {
namespace {

// Atoms per thread below which the spread and the interpolation run on fewer threads: each atom
// touches p^3 mesh points.
constexpr std::size_t kAtomsPerThread = 256;

// The three axis splines of one atom.
struct AtomSplines {
  AxisSpline axis[3];

  void set(const double* x, const double* inv_t, const int* mesh, int order) {
    for (int d = 0; d < 3; ++d) {
      const double s = inv_t[3 * d] * x[0] + inv_t[3 * d + 1] * x[1] + inv_t[3 * d + 2] * x[2];
      axis[d].set(s, mesh[d], order);
    }
  }

  // body(mesh index, weight, dweight/du along a, b, c) over the atom's p^3 mesh points.
  template <class Body>
  void for_each_point(const int* mesh, int order, Body&& body) const {
    for (int a = 0; a < order; ++a) {
      const std::size_t ia = static_cast<std::size_t>(AxisSpline::index(axis[0].base, a, mesh[0])) * mesh[1];
      for (int b = 0; b < order; ++b) {
        const std::size_t iab = (ia + AxisSpline::index(axis[1].base, b, mesh[1])) * mesh[2];
        const double wab = axis[0].weight[a] * axis[1].weight[b];
        const double dab[2] = {axis[0].slope[a] * axis[1].weight[b], axis[0].weight[a] * axis[1].slope[b]};
        for (int c = 0; c < order; ++c) {
          const double wc = axis[2].weight[c];
          const double grad[3] = {dab[0] * wc, dab[1] * wc, wab * axis[2].slope[c]};
          body(iab + AxisSpline::index(axis[2].base, c, mesh[2]), wab * wc, grad);
        }
      }
    }
  }
};

// nvalchemiops::spline_spread: the charge mesh of the rows given.
void spread(Span<const TensorRef> args, Span<const TensorRef> outs, const OpState& s) {
  const Params& params = *s.params;
  const SpreadArgs a = unpack_spread(args, outs, params, Device::cpu);
  const std::size_t k = params.mesh_points();
  const int threads = loop_threads(s.threads, a.n, kAtomsPerThread);
  std::vector<double> extra(k * static_cast<std::size_t>(threads - 1), 0.0);
  std::fill(a.mesh, a.mesh + k, 0.0);
  parallel_for(
      threads, a.n,
      [&](std::size_t begin, std::size_t end, int t) {
        double* mesh = t == 0 ? a.mesh : &extra[k * static_cast<std::size_t>(t - 1)];
        AtomSplines splines;
        for (std::size_t i = begin; i < end; ++i) {
          const double q = a.q[i];
          if (q == 0.0) continue;
          splines.set(a.x + 3 * i, a.inv_t, params.mesh.data(), params.order);
          splines.for_each_point(params.mesh.data(), params.order,
                                 [&](std::size_t g, double w, const double*) { mesh[g] += q * w; });
        }
      },
      kAtomsPerThread);
  for (int t = 1; t < threads; ++t) {
    const double* mesh = &extra[k * static_cast<std::size_t>(t - 1)];
    for (std::size_t g = 0; g < k; ++g) a.mesh[g] += mesh[g];
  }
}

// alchemiops::_pme_compute_partial_total_charge
void total_charge(Span<const TensorRef> args, Span<const TensorRef> outs, const OpState&) {
  const char* op = kTotalChargeOp.qualname;
  expect_count(op, "arguments", args.size(), 1);
  expect_count(op, "outputs", outs.size(), 1);
  const std::size_t n = args[0].rows;
  const double* q = expect_f64(op, "charges", 0, args[0], n, 1);
  double* out = expect_f64(op, "total charge", 0, outs[0], 1, 1);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += q[i];
  out[0] = sum;
}

// distspec_pme::solve: the mesh potential (and the six virial meshes) from the global charge
// mesh, with the k-space virial / C. The FFT and its plans belong to the model (OpState::fft).
void solve(Span<const TensorRef> args, Span<const TensorRef> outs, const OpState& s) {
  const Params& params = *s.params;
  const SolveArgs a = unpack_solve(args, outs, params, Device::cpu);
  RealFft3d& fft = *s.fft;
  const int* mesh = params.mesh.data();
  fft.resize(params.mesh);
  const std::size_t k = params.mesh_points();
  std::copy(a.mesh, a.mesh + k, fft.real());
  fft.forward();
  const std::vector<double> moduli = mesh_moduli(params.order, mesh);
  const double* bsp[3] = {moduli.data(), moduli.data() + mesh[0], moduli.data() + mesh[0] + mesh[1]};
  const double volume = 1.0 / abs_det(a.inv_t), alpha = a.alpha[0];
  const int half = mesh[2] / 2 + 1;
  const std::size_t n_spectrum = fft.spectrum_size();
  std::complex<double>* spectrum = fft.spectrum();
  // Q^(m) kept for the virial meshes; G(m) V_ab(m) per point for them too.
  std::vector<std::complex<double>> charge_spectrum;
  std::vector<double> virial_kernel;
  if (a.virial_meshes) {
    charge_spectrum.assign(spectrum, spectrum + n_spectrum);
    virial_kernel.resize(6 * n_spectrum);
  }
  double virial[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  std::size_t at = 0;
  for (int n1 = 0; n1 < mesh[0]; ++n1)
    for (int n2 = 0; n2 < mesh[1]; ++n2)
      for (int n3 = 0; n3 < half; ++n3, ++at) {
        const int n[3] = {n1, n2, n3};
        double v[6];
        const double g = green_at(a.inv_t, n, mesh, bsp[0][n1] * bsp[1][n2] * bsp[2][n3], alpha, volume, v);
        // The half spectrum stands for its mirror image too, but for n3 = 0 and the Nyquist plane.
        const double weight = (n3 == 0 || 2 * n3 == mesh[2]) ? 1.0 : 2.0;
        const double power = std::norm(spectrum[at]);
        for (int c = 0; c < 6; ++c) virial[c] += weight * v[c] * power;
        if (a.virial_meshes)
          for (int c = 0; c < 6; ++c) virial_kernel[6 * at + c] = v[c];
        spectrum[at] *= g;
      }
  for (int c = 0; c < 6; ++c) a.virial[c] = 0.5 * virial[c];
  fft.backward();
  std::copy(fft.real(), fft.real() + k, a.potential);
  if (!a.virial_meshes) return;
  for (int c = 0; c < 6; ++c) {
    for (std::size_t m = 0; m < n_spectrum; ++m) spectrum[m] = charge_spectrum[m] * virial_kernel[6 * m + c];
    fft.backward();
    std::copy(fft.real(), fft.real() + k, a.virial_meshes + k * static_cast<std::size_t>(c));
  }
}

// distspec_pme::interpolate: per row, its k-space, self and background energy, its k-space force
// and its share of the k-space virial. Rows are independent.
void interpolate(Span<const TensorRef> args, Span<const TensorRef> outs, const OpState& s) {
  const Params& params = *s.params;
  const InterpolateArgs a = unpack_interpolate(args, outs, params, Device::cpu);
  const int* mesh = params.mesh.data();
  const std::size_t k = params.mesh_points();
  const double c = params.coulomb_constant, alpha = a.alpha[0], total = a.total_charge[0];
  const double volume = 1.0 / abs_det(a.inv_t);
  parallel_for(
      loop_threads(s.threads, a.n, kAtomsPerThread), a.n,
      [&](std::size_t begin, std::size_t end, int) {
        AtomSplines splines;
        for (std::size_t i = begin; i < end; ++i) {
          const double q = a.q[i];
          if (q == 0.0) continue;  // atoms of other species (NULL types), or uncharged ones
          splines.set(a.x + 3 * i, a.inv_t, mesh, params.order);
          double phi = 0.0, dphi[3] = {0.0, 0.0, 0.0}, psi[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
          splines.for_each_point(mesh, params.order, [&](std::size_t g, double w, const double* grad) {
            const double p = a.potential[g];
            phi += w * p;
            for (int d = 0; d < 3; ++d) dphi[d] += grad[d] * p;
            if (a.virial_rows)
              for (int v = 0; v < 6; ++v) psi[v] += w * a.virial_meshes[k * static_cast<std::size_t>(v) + g];
          });
          // d phi / dx_c = sum_d (d phi / du_d) K_d (cell_inv_t)_dc
          for (int x = 0; x < 3; ++x) {
            double field = 0.0;
            for (int d = 0; d < 3; ++d) field += dphi[d] * mesh[d] * a.inv_t[3 * d + x];
            a.forces[3 * i + x] -= c * q * field;
          }
          a.energy[i] += c * (0.5 * q * phi - alpha * q * q / kSqrtPi -
                              0.5 * kPi * q * total / (alpha * alpha * volume));
          if (a.virial_rows)
            for (int v = 0; v < 6; ++v) a.virial_rows[6 * i + v] += 0.5 * c * q * psi[v];
        }
      },
      kAtomsPerThread);
}

}  // namespace

void register_ops(OpRegistry& registry) {
  registry.add<Device::cpu>(kSpreadOp, spread);
  registry.add<Device::cpu>(kTotalChargeOp, total_charge);
  registry.add<Device::cpu>(kSolveOp, solve);
  registry.add<Device::cpu>(kInterpolateOp, interpolate);
  // Its real-space pairs are the Ewald model's kernel.
  ewald::register_ops(registry);
}

}  // namespace distspec::models::pme
