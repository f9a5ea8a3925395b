// The convolution of spline_convolution.h on the CPU: edge by edge, each edge's paths contracted
// with the sender's row and added into the receiver's row.
#include "models/mace/spline_convolution.h"

#include <cmath>
#include <vector>

#include "models/mace/spherical_harmonics.h"

namespace distspec::models::mace {
namespace {

constexpr int kMaxD = 2 * kMaxShL + 1;

// What an edge contributes through every path, found once per edge: its length, direction,
// harmonics and place in the spline table.
struct EdgeGeometry {
  double r = 0.0;
  double u[3] = {0.0, 0.0, 0.0};
  double Y[kShDim] = {};
  double dY_dv[kShDim][3] = {};
  SplinePoint point;
};

template <class T>
bool edge_geometry(const SplineConvolution<T>& conv, int64_t e, bool with_gradient, EdgeGeometry& g) {
  const T* v = conv.vectors + 3 * e;
  const double x = v[0], y = v[1], z = v[2];
  g.r = std::sqrt(x * x + y * y + z * z);
  if (!conv.radial.inside(g.r)) return false;
  g.u[0] = x / g.r;
  g.u[1] = y / g.r;
  g.u[2] = z / g.r;
  if (with_gradient) spherical_harmonics_with_gradient(g.u, g.r, g.Y, g.dY_dv);
  else spherical_harmonics(g.u, g.Y);
  g.point = conv.radial.locate(g.r);
  return true;
}

struct Path {
  int64_t d1, d2, d3, in, out, y0, cg_begin, cg_end;
};

inline Path path_of(const int64_t* row) {
  return {2 * row[kL1] + 1, 2 * row[kL2] + 1, 2 * row[kL3] + 1, row[kInOffset], row[kOutOffset],
          row[kL2] * row[kL2], row[kCgBegin], row[kCgEnd]};
}

// A[i][k] = sum_j cg[i, j, k] Y_j: the path's coupling of input component i to output k.
template <class T>
void coupling(const SplineConvolution<T>& conv, const Path& p, const double* Y, T A[kMaxD][kMaxD]) {
  for (int64_t i = 0; i < p.d1; ++i)
    for (int64_t k = 0; k < p.d3; ++k) A[i][k] = T(0);
  for (int64_t n = p.cg_begin; n < p.cg_end; ++n) {
    const int64_t* ijk = conv.cg_ijk + 3 * n;
    A[ijk[0]][ijk[2]] += conv.cg_value[n] * static_cast<T>(Y[p.y0 + ijk[1]]);
  }
}

}  // namespace

template <class T>
void spline_convolution_forward(const SplineConvolution<T>& conv, int64_t edge_begin, int64_t edge_end,
                                T* message) {
  const int64_t C = conv.channels;
  std::vector<T> R(static_cast<std::size_t>(C));
  EdgeGeometry g;
  T A[kMaxD][kMaxD];
  for (int64_t e = edge_begin; e < edge_end; ++e) {
    if (!edge_geometry(conv, e, false, g)) continue;
    const T* x = conv.node_feats + conv.senders[e] * conv.in_dim;
    T* out = message + conv.receivers[e] * conv.out_dim;
    for (int64_t q = 0; q < conv.n_paths; ++q) {
      const Path p = path_of(conv.paths + q * kPathColumns);
      coupling(conv, p, g.Y, A);
      for (int64_t u = 0; u < C; ++u) R[u] = conv.radial.evaluate(g.point, q * C + u, false);
      for (int64_t u = 0; u < C; ++u) {
        const T* xu = x + p.in + u * p.d1;
        T* ou = out + p.out + u * p.d3;
        for (int64_t i = 0; i < p.d1; ++i) {
          const T xr = R[u] * xu[i];
          for (int64_t k = 0; k < p.d3; ++k) ou[k] += xr * A[i][k];
        }
      }
    }
  }
}

template <class T>
void spline_convolution_backward(const SplineConvolution<T>& conv, const T* grad_message, int64_t edge_begin,
                                 int64_t edge_end, T* grad_node_feats, T* grad_vectors) {
  const int64_t C = conv.channels;
  EdgeGeometry g;
  T A[kMaxD][kMaxD], M[kMaxD][kMaxD];
  for (int64_t e = edge_begin; e < edge_end; ++e) {
    T* gv = grad_vectors + 3 * e;
    if (!edge_geometry(conv, e, true, g)) {
      gv[0] = gv[1] = gv[2] = T(0);
      continue;
    }
    const int64_t s = conv.senders[e];
    const T* x = conv.node_feats + s * conv.in_dim;
    T* gx = grad_node_feats + s * conv.in_dim;
    const T* gm = grad_message + conv.receivers[e] * conv.out_dim;
    T dE_dr = T(0);      // through R(|v|)
    T dE_dY[kShDim] = {};  // through Y(v / |v|)
    for (int64_t q = 0; q < conv.n_paths; ++q) {
      const Path p = path_of(conv.paths + q * kPathColumns);
      coupling(conv, p, g.Y, A);
      for (int64_t i = 0; i < p.d1; ++i)
        for (int64_t k = 0; k < p.d3; ++k) M[i][k] = T(0);
      for (int64_t u = 0; u < C; ++u) {
        const T R = conv.radial.evaluate(g.point, q * C + u, false);
        const T dR = conv.radial.evaluate(g.point, q * C + u, true);
        const T* xu = x + p.in + u * p.d1;
        const T* gu = gm + p.out + u * p.d3;
        T* gxu = gx + p.in + u * p.d1;
        T dE_dR = T(0);
        for (int64_t i = 0; i < p.d1; ++i) {
          T t = T(0);  // (A g)_i
          for (int64_t k = 0; k < p.d3; ++k) t += A[i][k] * gu[k];
          gxu[i] += R * t;
          dE_dR += xu[i] * t;
          const T rx = R * xu[i];
          for (int64_t k = 0; k < p.d3; ++k) M[i][k] += rx * gu[k];
        }
        dE_dr += dR * dE_dR;
      }
      for (int64_t n = p.cg_begin; n < p.cg_end; ++n) {
        const int64_t* ijk = conv.cg_ijk + 3 * n;
        dE_dY[p.y0 + ijk[1]] += conv.cg_value[n] * M[ijk[0]][ijk[2]];
      }
    }
    for (int a = 0; a < 3; ++a) {
      double d = static_cast<double>(dE_dr) * g.u[a];
      for (int j = 1; j < kShDim; ++j) d += static_cast<double>(dE_dY[j]) * g.dY_dv[j][a];
      gv[a] = static_cast<T>(d);
    }
  }
}

template void spline_convolution_forward<float>(const SplineConvolution<float>&, int64_t, int64_t, float*);
template void spline_convolution_forward<double>(const SplineConvolution<double>&, int64_t, int64_t, double*);
template void spline_convolution_backward<float>(const SplineConvolution<float>&, const float*, int64_t, int64_t,
                                                 float*, float*);
template void spline_convolution_backward<double>(const SplineConvolution<double>&, const double*, int64_t,
                                                  int64_t, double*, double*);

}  // namespace distspec::models::mace
