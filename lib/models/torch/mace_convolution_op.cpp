// distspec_mace::spline_convolution and its backward (doc/mace_kernels.md): the torch binding of
// models/mace/spline_convolution.h. The autograd kernel's backward calls the backward op through
// the dispatcher, so that make_fx traces both into an exported graph; the backward op has no
// derivative of its own (forces and virials need first derivatives only).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#ifdef DISTSPEC_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "models/mace/spline_convolution.h"
#include "models/torch/mace_op_util.h"

namespace distspec::models::torch_kind {
namespace {

DISTSPEC_MACE_OP_NAMES(spline_convolution)
constexpr const char* kTablesHint =
    "build the tables with distspec_export.mace_kernels.convolution.SplineConvolution.from_mace";
// The backward on the CPU gives a thread no fewer edges than this: below it, summing the thread's
// own block of sender rows costs more than its edges.
constexpr int64_t kEdgesPerPart = 1024;

// The tensors a call reads, contiguous, and the kernel's view of them.
template <class T>
struct Inputs {
  std::vector<at::Tensor> keep;
  mace::SplineConvolution<T> conv;
};

void check_on(const char* op, const char* name, const at::Tensor& t, const at::Tensor& node_feats) {
  TORCH_CHECK(t.device() == node_feats.device(), op, ": ", name, " is on ", t.device(), ", node_feats on ",
              node_feats.device(), "; move every input (the module's tables are buffers) to one device");
}

// Everything the kernels assume of the table contents, checked where they can be read without a
// device synchronisation (host tensors): offsets inside the rows, l <= 3, CG ranges and indices.
void check_paths(const char* op, const at::Tensor& paths, const at::Tensor& cg_ijk, int64_t channels,
                 int64_t in_dim, int64_t out_dim) {
  const int64_t n_cg = cg_ijk.size(0);
  const int64_t* p = paths.data_ptr<int64_t>();
  for (int64_t q = 0; q < paths.size(0); ++q, p += mace::kPathColumns) {
    const int64_t l1 = p[mace::kL1], l2 = p[mace::kL2], l3 = p[mace::kL3];
    TORCH_CHECK(l1 >= 0 && l1 <= mace::kMaxShL && l2 >= 0 && l2 <= mace::kMaxShL && l3 >= 0 &&
                    l3 <= mace::kMaxShL,
                op, ": paths[", q, "] couples l = ", l1, " x ", l2, " -> ", l3,
                "; the kernels take l <= 3 (spherical harmonics to l = 3); fall back to mace's own conv_tp");
    TORCH_CHECK(p[mace::kInOffset] >= 0 && p[mace::kInOffset] + channels * (2 * l1 + 1) <= in_dim &&
                    p[mace::kOutOffset] >= 0 && p[mace::kOutOffset] + channels * (2 * l3 + 1) <= out_dim,
                op, ": paths[", q, "] reads columns from ", p[mace::kInOffset], " or writes from ",
                p[mace::kOutOffset], " past a row (node_feats ", in_dim, ", message ", out_dim, " wide); ",
                kTablesHint);
    TORCH_CHECK(0 <= p[mace::kCgBegin] && p[mace::kCgBegin] <= p[mace::kCgEnd] && p[mace::kCgEnd] <= n_cg, op,
                ": paths[", q, "] names CG entries [", p[mace::kCgBegin], ", ", p[mace::kCgEnd], ") of ", n_cg,
                "; ", kTablesHint);
    for (int64_t n = p[mace::kCgBegin]; n < p[mace::kCgEnd]; ++n) {
      const int64_t* ijk = cg_ijk.data_ptr<int64_t>() + 3 * n;
      TORCH_CHECK(ijk[0] >= 0 && ijk[0] <= 2 * l1 && ijk[1] >= 0 && ijk[1] <= 2 * l2 && ijk[2] >= 0 &&
                      ijk[2] <= 2 * l3,
                  op, ": cg_ijk[", n, "] = (", ijk[0], ", ", ijk[1], ", ", ijk[2], ") is outside path ", q,
                  "'s (", 2 * l1 + 1, ", ", 2 * l2 + 1, ", ", 2 * l3 + 1, "); ", kTablesHint);
    }
  }
}

// Senders inside node_feats, receivers inside [0, n_out) and grouped (non-decreasing): host
// tensors only, as check_paths.
void check_edges(const char* op, const at::Tensor& senders, const at::Tensor& receivers, int64_t n_rows,
                 int64_t n_out) {
  const int64_t* s = senders.data_ptr<int64_t>();
  const int64_t* r = receivers.data_ptr<int64_t>();
  for (int64_t e = 0; e < senders.size(0); ++e) {
    TORCH_CHECK(s[e] >= 0 && s[e] < n_rows, op, ": senders[", e, "] = ", s[e], " is not a row of node_feats (",
                n_rows, " rows)");
    TORCH_CHECK(r[e] >= 0 && r[e] < n_out, op, ": receivers[", e, "] = ", r[e], " is not in [0, n_out = ", n_out,
                "); edges into rows >= n_out belong to no output row: drop them before the call");
    TORCH_CHECK(e == 0 || r[e - 1] <= r[e], op, ": receivers must be non-decreasing (edges grouped by receiver); ",
                "receivers[", e - 1, "] = ", r[e - 1], " > receivers[", e, "] = ", r[e],
                "; sort the edges by receiver once per neighbour list (a stable argsort of edge_index[1])");
  }
}

template <class T>
Inputs<T> inputs_of(const char* op, const at::Tensor& node_feats, const at::Tensor& vectors,
                    const at::Tensor& senders, const at::Tensor& receivers, int64_t n_out, const at::Tensor& spline,
                    double r_max, const at::Tensor& paths, const at::Tensor& cg_ijk, const at::Tensor& cg_value,
                    int64_t out_dim) {
  TORCH_CHECK(node_feats.dim() == 2, op, ": node_feats must be [n_rows, C * D_in] (linear_up's output); got ",
              sizes_of(node_feats));
  const int64_t n_edges = vectors.dim() == 2 ? vectors.size(0) : -1;
  TORCH_CHECK(vectors.dim() == 2 && vectors.size(1) == 3 && vectors.scalar_type() == node_feats.scalar_type(), op,
              ": vectors must be ", node_feats.scalar_type(), " [E, 3] (positions[receiver] - positions[sender] + "
              "shift); got ", vectors.scalar_type(), " ", sizes_of(vectors));
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor&>{"senders", senders}, {"receivers", receivers}})
    TORCH_CHECK(t.dim() == 1 && t.size(0) == n_edges && t.scalar_type() == at::kLong, op, ": ", name,
                " must be int64 [E] with E = vectors.size(0) = ", n_edges, "; got ", t.scalar_type(), " ",
                sizes_of(t), " (edge_index[0] and edge_index[1])");
  TORCH_CHECK(spline.dim() == 4 && spline.size(0) >= 2 && spline.size(1) == 2 &&
                  spline.scalar_type() == node_feats.scalar_type(),
              op, ": spline must be ", node_feats.scalar_type(),
              " [knots >= 2, 2, paths, C] (values and d/dr at the knots); got ", spline.scalar_type(), " ",
              sizes_of(spline), "; ", kTablesHint);
  const int64_t n_paths = spline.size(2), channels = spline.size(3);
  TORCH_CHECK(paths.dim() == 2 && paths.size(0) == n_paths && paths.size(1) == mace::kPathColumns &&
                  paths.scalar_type() == at::kLong,
              op, ": paths must be int64 [", n_paths, ", ", mace::kPathColumns,
              "] (l1, l2, l3, in_offset, out_offset, cg_begin, cg_end per path); got ", paths.scalar_type(), " ",
              sizes_of(paths), "; ", kTablesHint);
  TORCH_CHECK(cg_ijk.dim() == 2 && cg_ijk.size(1) == 3 && cg_ijk.scalar_type() == at::kLong && cg_value.dim() == 1 &&
                  cg_value.size(0) == cg_ijk.size(0) && cg_value.scalar_type() == node_feats.scalar_type(),
              op, ": cg_ijk must be int64 [n_cg, 3] and cg_value ", node_feats.scalar_type(),
              " [n_cg]; got ", cg_ijk.scalar_type(), " ", sizes_of(cg_ijk), " and ", cg_value.scalar_type(), " ",
              sizes_of(cg_value), "; ", kTablesHint);
  TORCH_CHECK(r_max > 0.0, op, ": r_max must be positive (the cutoff the spline was tabulated to); got ", r_max);
  TORCH_CHECK(n_out >= 0, op, ": n_out must be >= 0; got ", n_out);
  TORCH_CHECK(channels > 0 && out_dim > 0 && out_dim % channels == 0, op, ": out_dim = ", out_dim,
              " must be a positive multiple of C = ", channels, " (the tensor product's irreps_out.dim)");
  TORCH_CHECK(node_feats.size(1) % channels == 0 && node_feats.size(1) / channels <= mace::kMaxInPerChannel, op,
              ": node_feats has ", node_feats.size(1), " columns; expected C * D_in with C = ", channels,
              " and D_in <= ", mace::kMaxInPerChannel, " (irreps of l <= 3)");
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor&>{"vectors", vectors},
                                {"senders", senders}, {"receivers", receivers}, {"spline", spline},
                                {"paths", paths}, {"cg_ijk", cg_ijk}, {"cg_value", cg_value}})
    check_on(op, name, t, node_feats);

  const std::vector<at::Tensor> keep = {node_feats.contiguous(), vectors.contiguous(), senders.contiguous(),
                                        receivers.contiguous(),  spline.contiguous(),  paths.contiguous(),
                                        cg_ijk.contiguous(),     cg_value.contiguous()};
  if (node_feats.device().is_cpu()) {
    check_paths(op, keep[5], keep[6], channels, node_feats.size(1), out_dim);
    check_edges(op, keep[2], keep[3], node_feats.size(0), n_out);
  }
  Inputs<T> in;
  in.keep = keep;
  mace::SplineConvolution<T>& c = in.conv;
  c.n_edges = n_edges;
  c.channels = channels;
  c.in_dim = node_feats.size(1);
  c.out_dim = out_dim;
  c.n_paths = n_paths;
  c.node_feats = keep[0].data_ptr<T>();
  c.vectors = keep[1].data_ptr<T>();
  c.senders = keep[2].data_ptr<int64_t>();
  c.receivers = keep[3].data_ptr<int64_t>();
  c.radial = {keep[4].data_ptr<T>(), spline.size(0), n_paths * channels, r_max};
  c.paths = keep[5].data_ptr<int64_t>();
  c.cg_ijk = keep[6].data_ptr<int64_t>();
  c.cg_value = keep[7].data_ptr<T>();
  return in;
}

void check_dtype(const char* op, const at::Tensor& node_feats) {
  TORCH_CHECK(node_feats.scalar_type() == at::kFloat || node_feats.scalar_type() == at::kDouble, op,
              ": node_feats must be float32 or float64; got ", node_feats.scalar_type());
}

// The first edge of each receiver row of [row_begin, row_end) (edges grouped by receiver).
int64_t first_edge_of(const int64_t* receivers, int64_t n_edges, int64_t row) {
  return std::lower_bound(receivers, receivers + n_edges, row) - receivers;
}

at::Tensor spline_convolution(const at::Tensor& node_feats, const at::Tensor& vectors, const at::Tensor& senders,
                              const at::Tensor& receivers, int64_t n_out, const at::Tensor& spline, double r_max,
                              const at::Tensor& paths, const at::Tensor& cg_ijk, const at::Tensor& cg_value,
                              int64_t out_dim) {
  check_dtype(kForward, node_feats);
  at::Tensor message = at::zeros({n_out, out_dim}, node_feats.options());
  AT_DISPATCH_FLOATING_TYPES(node_feats.scalar_type(), "spline_convolution", [&] {
    const Inputs<scalar_t> in = inputs_of<scalar_t>(kForward, node_feats, vectors, senders, receivers, n_out, spline,
                                                     r_max, paths, cg_ijk, cg_value, out_dim);
#ifdef DISTSPEC_WITH_CUDA
    if (node_feats.is_cuda()) {
      mace::spline_convolution_forward_cuda<scalar_t>(
          in.conv, n_out, message.data_ptr<scalar_t>(),
          static_cast<CUstream_st*>(current_stream(node_feats)));
      return;
    }
#endif
    // Receiver rows split among threads: each thread owns its rows' edges, so no two add into
    // one row.
    at::parallel_for(0, n_out, 64, [&](int64_t row_begin, int64_t row_end) {
      const int64_t* r = in.conv.receivers;
      mace::spline_convolution_forward<scalar_t>(in.conv, first_edge_of(r, in.conv.n_edges, row_begin),
                                                 first_edge_of(r, in.conv.n_edges, row_end),
                                                 message.data_ptr<scalar_t>());
    });
  });
  return message;
}

std::tuple<at::Tensor, at::Tensor> spline_convolution_backward(
    const at::Tensor& grad_message, const at::Tensor& node_feats, const at::Tensor& vectors, const at::Tensor& senders,
    const at::Tensor& receivers, const at::Tensor& spline, double r_max, const at::Tensor& paths,
    const at::Tensor& cg_ijk, const at::Tensor& cg_value) {
  check_dtype(kBackward, node_feats);
  TORCH_CHECK(grad_message.dim() == 2 && grad_message.scalar_type() == node_feats.scalar_type(), kBackward,
              ": grad_message must be ", node_feats.scalar_type(), " [n_out, out_dim]; got ",
              grad_message.scalar_type(), " ", sizes_of(grad_message));
  check_on(kBackward, "grad_message", grad_message, node_feats);
  const int64_t n_out = grad_message.size(0);
  at::Tensor grad_node_feats = at::zeros_like(node_feats, at::MemoryFormat::Contiguous);
  at::Tensor grad_vectors = at::empty({vectors.size(0), 3}, vectors.options());
  AT_DISPATCH_FLOATING_TYPES(node_feats.scalar_type(), "spline_convolution_backward", [&] {
    const Inputs<scalar_t> in = inputs_of<scalar_t>(kBackward, node_feats, vectors, senders, receivers, n_out,
                                                     spline, r_max, paths, cg_ijk, cg_value, grad_message.size(1));
    const at::Tensor g = grad_message.contiguous();
#ifdef DISTSPEC_WITH_CUDA
    if (node_feats.is_cuda()) {
      mace::spline_convolution_backward_cuda<scalar_t>(
          in.conv, n_out, g.data_ptr<scalar_t>(), grad_node_feats.data_ptr<scalar_t>(),
          grad_vectors.data_ptr<scalar_t>(), static_cast<CUstream_st*>(current_stream(node_feats)));
      return;
    }
#endif
    // Edges split among threads. An edge adds into its sender's row, which an edge of another
    // thread may share, so each thread but the first sums into a row block of its own, added at
    // the end; grad_vectors' rows are the edges', never shared. A fixed split for a given thread
    // count keeps the sums' order, and so the result, the same from call to call.
    const int64_t n_edges = in.conv.n_edges;
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n_edges / kEdgesPerPart));
    at::Tensor partial = parts > 1 ? at::zeros({parts - 1, grad_node_feats.numel()}, grad_node_feats.options())
                                   : at::Tensor();
    at::parallel_for(0, parts, 1, [&](int64_t part_begin, int64_t part_end) {
      for (int64_t part = part_begin; part < part_end; ++part) {
        scalar_t* into = part == 0 ? grad_node_feats.data_ptr<scalar_t>()
                                   : partial.data_ptr<scalar_t>() + (part - 1) * grad_node_feats.numel();
        mace::spline_convolution_backward<scalar_t>(in.conv, g.data_ptr<scalar_t>(), n_edges * part / parts,
                                                    n_edges * (part + 1) / parts, into,
                                                    grad_vectors.data_ptr<scalar_t>());
      }
    });
    if (parts > 1) grad_node_feats.add_(partial.sum(0).view_as(grad_node_feats));
  });
  return {grad_node_feats, grad_vectors};
}

// ---- autograd --------------------------------------------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The backward op as a node of its own graph, so that differentiating it says why it cannot be.
struct SplineConvolutionBackwardFunction : torch::autograd::Function<SplineConvolutionBackwardFunction> {
  static variable_list forward(AutogradContext*, const at::Tensor& grad_message, const at::Tensor& node_feats,
                               const at::Tensor& vectors, const at::Tensor& senders, const at::Tensor& receivers,
                               const at::Tensor& spline, double r_max, const at::Tensor& paths,
                               const at::Tensor& cg_ijk, const at::Tensor& cg_value) {
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op =
        typed_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                    const at::Tensor&, const at::Tensor&, const at::Tensor&, double,
                                                    const at::Tensor&, const at::Tensor&, const at::Tensor&)>(
            kBackward);
    auto [grad_node_feats, grad_vectors] =
        op.call(grad_message, node_feats, vectors, senders, receivers, spline, r_max, paths, cg_ijk, cg_value);
    return {grad_node_feats, grad_vectors};
  }
  static variable_list backward(AutogradContext*, variable_list) {
    no_second_derivative(kBackward, "interaction");
  }
};

struct SplineConvolutionFunction : torch::autograd::Function<SplineConvolutionFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& node_feats, const at::Tensor& vectors,
                            const at::Tensor& senders, const at::Tensor& receivers, c10::SymInt n_out,
                            const at::Tensor& spline, double r_max, const at::Tensor& paths,
                            const at::Tensor& cg_ijk, const at::Tensor& cg_value, int64_t out_dim) {
    ctx->save_for_backward({node_feats, vectors, senders, receivers, spline, paths, cg_ijk, cg_value});
    ctx->saved_data["r_max"] = r_max;
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = typed_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                               const at::Tensor&, c10::SymInt, const at::Tensor&, double,
                                               const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t)>(
        kForward);
    return op.call(node_feats, vectors, senders, receivers, std::move(n_out), spline, r_max, paths, cg_ijk, cg_value,
                   out_dim);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list s = ctx->get_saved_variables();
    const variable_list g = SplineConvolutionBackwardFunction::apply(
        grads[0], s[0], s[1], s[2], s[3], s[4], ctx->saved_data["r_max"].toDouble(), s[5], s[6], s[7]);
    // Edges, tables and sizes are constants of the export: no gradient for them.
    return {g[0], g[1], at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor spline_convolution_autograd(const at::Tensor& node_feats, const at::Tensor& vectors,
                                       const at::Tensor& senders, const at::Tensor& receivers, c10::SymInt n_out,
                                       const at::Tensor& spline, double r_max, const at::Tensor& paths,
                                       const at::Tensor& cg_ijk, const at::Tensor& cg_value, int64_t out_dim) {
  return SplineConvolutionFunction::apply(node_feats, vectors, senders, receivers, std::move(n_out), spline, r_max,
                                          paths, cg_ijk, cg_value, out_dim);
}

std::tuple<at::Tensor, at::Tensor> spline_convolution_backward_autograd(
    const at::Tensor& grad_message, const at::Tensor& node_feats, const at::Tensor& vectors, const at::Tensor& senders,
    const at::Tensor& receivers, const at::Tensor& spline, double r_max, const at::Tensor& paths,
    const at::Tensor& cg_ijk, const at::Tensor& cg_value) {
  const variable_list g = SplineConvolutionBackwardFunction::apply(grad_message, node_feats, vectors, senders,
                                                                   receivers, spline, r_max, paths, cg_ijk, cg_value);
  return {g[0], g[1]};
}

}  // namespace
}  // namespace distspec::models::torch_kind

TORCH_LIBRARY_FRAGMENT(distspec_mace, m) {
  m.def("spline_convolution(Tensor node_feats, Tensor vectors, Tensor senders, Tensor receivers, SymInt n_out, "
        "Tensor spline, float r_max, Tensor paths, Tensor cg_ijk, Tensor cg_value, int out_dim) -> Tensor");
  m.def("spline_convolution_backward(Tensor grad_message, Tensor node_feats, Tensor vectors, Tensor senders, "
        "Tensor receivers, Tensor spline, float r_max, Tensor paths, Tensor cg_ijk, Tensor cg_value) "
        "-> (Tensor grad_node_feats, Tensor grad_vectors)");
}

DISTSPEC_MACE_OP_KERNELS(spline_convolution)
