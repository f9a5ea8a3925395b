#include "models/mpnn/ops_radial.h"

#include <cmath>
#include <string>

#include "distspec/util/threads.h"

namespace distspec::models::mpnn {

using namespace distspec::tensor;
namespace {

constexpr double kPi = 3.14159265358979323846;

void expect_column(const char* op, std::size_t cols) {
  if (cols != 1)
    throw Error("tensor.shape", "", std::string(op) + ": r must have one column, got " + std::to_string(cols));
}

double gaussian_centre(const RadialBasis& b, int k) {
  return b.size > 1 ? b.start + (b.stop - b.start) * k / (b.size - 1) : b.start;
}

// phi_k(r) in fp64 (the basis is cheap next to the layers it feeds, and fp64 keeps fp32 models
// from losing the small differences between neighbouring centres).
double basis_value(const RadialBasis& b, double r, int k) {
  if (b.kind == RadialBasis::Kind::gaussian) {
    const double mu = gaussian_centre(b, k);
    const double inv_w2 = 1.0 / (b.width * b.width);
    return std::exp(-0.5 * (r - mu) * (r - mu) * inv_w2);
  }
  const double norm = std::sqrt(2.0 / b.cutoff);
  return norm * std::sin((k + 1) * kPi / b.cutoff * r) / r;
}

// dphi_k/dr, given phi = phi_k(r): a gaussian's slope is its value times a polynomial, which
// spares the adjoint an exp per edge and basis function; a bessel function's is recomputed.
double basis_slope(const RadialBasis& b, double r, int k, double phi) {
  if (b.kind == RadialBasis::Kind::gaussian) {
    const double inv_w2 = 1.0 / (b.width * b.width);
    return -(r - gaussian_centre(b, k)) * inv_w2 * phi;
  }
  const double norm = std::sqrt(2.0 / b.cutoff);
  const double w = (k + 1) * kPi / b.cutoff;
  return norm * (w * std::cos(w * r) / r - std::sin(w * r) / (r * r));
}

void cutoff_values(const CosineCutoff& f, double r, double& value, double& slope) {
  if (r <= f.inner) {
    value = 1.0;
    slope = 0.0;
  } else if (r >= f.outer) {
    value = 0.0;
    slope = 0.0;
  } else {
    const double w = kPi / (f.outer - f.inner);
    value = 0.5 * (std::cos(w * (r - f.inner)) + 1.0);
    slope = -0.5 * w * std::sin(w * (r - f.inner));
  }
}

}  // namespace

template <class T>
Var<T> radial_basis(Tape& tape, const Var<T>& r, const RadialBasis& basis) {
  expect_column("radial_basis", r.cols());
  if (basis.size < 1) throw Error("tensor.shape", "", "radial_basis: size must be at least 1");
  const std::size_t n = r.rows(), k_max = static_cast<std::size_t>(basis.size);
  Tensor<T> phi = tape.tensor<T>(n, k_max);
  const Tensor<T>& rv = r.value();
  parallel_for(tape.threads(), n, [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t i = begin; i < end; ++i)
      for (std::size_t k = 0; k < k_max; ++k)
        phi(i, k) = static_cast<T>(basis_value(basis, rv(i, 0), static_cast<int>(k)));
  });
  Var<T> out = Var<T>::result(std::move(phi), r.requires_grad());
  if (out.requires_grad())
    tape.record([r, out, basis, n, k_max, threads = tape.threads()] {
      Tensor<T>& gr = r.grad();
      const Tensor<T>& gy = out.grad();
      const Tensor<T>& rv = r.value();
      const Tensor<T>& phi = out.value();
      parallel_for(threads, n, [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t i = begin; i < end; ++i) {
          double g = 0.0;
          for (std::size_t k = 0; k < k_max; ++k)
            g += gy(i, k) * basis_slope(basis, rv(i, 0), static_cast<int>(k), phi(i, k));
          gr(i, 0) += static_cast<T>(g);
        }
      });
    });
  return out;
}

template <class T>
Var<T> cosine_cutoff(Tape& tape, const Var<T>& r, const CosineCutoff& cutoff) {
  expect_column("cosine_cutoff", r.cols());
  if (!(cutoff.outer > cutoff.inner))
    throw Error("tensor.shape", "", "cosine_cutoff: outer radius must exceed the inner radius");
  const std::size_t n = r.rows();
  Tensor<T> f = tape.tensor<T>(n, 1);
  const Tensor<T>& rv = r.value();
  parallel_for(tape.threads(), n, [&](std::size_t begin, std::size_t end, int) {
    double value = 0.0, slope = 0.0;
    for (std::size_t i = begin; i < end; ++i) {
      cutoff_values(cutoff, rv(i, 0), value, slope);
      f(i, 0) = static_cast<T>(value);
    }
  });
  Var<T> out = Var<T>::result(std::move(f), r.requires_grad());
  if (out.requires_grad())
    tape.record([r, out, cutoff, n, threads = tape.threads()] {
      Tensor<T>& gr = r.grad();
      const Tensor<T>& gy = out.grad();
      const Tensor<T>& rv = r.value();
      parallel_for(threads, n, [&](std::size_t begin, std::size_t end, int) {
        double value = 0.0, slope = 0.0;
        for (std::size_t i = begin; i < end; ++i) {
          cutoff_values(cutoff, rv(i, 0), value, slope);
          gr(i, 0) += static_cast<T>(gy(i, 0) * slope);
        }
      });
    });
  return out;
}

template Var<double> radial_basis<double>(Tape&, const Var<double>&, const RadialBasis&);
template Var<float> radial_basis<float>(Tape&, const Var<float>&, const RadialBasis&);
template Var<double> cosine_cutoff<double>(Tape&, const Var<double>&, const CosineCutoff&);
template Var<float> cosine_cutoff<float>(Tape&, const Var<float>&, const CosineCutoff&);

}  // namespace distspec::models::mpnn
