// distspec_mace::element_linear and its backward (doc/mace_kernels.md): the torch binding of the
// kernels in models/mace/element_linear.h. The autograd kernel's backward calls the backward op
// through the dispatcher, so that make_fx traces both into an exported graph; the backward op has
// no derivative of its own (forces need first derivatives only).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "models/mace/element_linear.h"
#include "models/torch/mace_op_util.h"

namespace distspec::models::torch_kind {
namespace {

DISTSPEC_MACE_OP_NAMES(element_linear)
constexpr const char* kTablesHint =
    "build the tables with distspec_export.mace_kernels.element_linear.ElementLinear.from_mace";

// The rows a kernel reads (x forward, grad_out backward), checked and contiguous; `layout` names
// their columns.
at::Tensor rows_of(const char* op, const char* name, const at::Tensor& t, const char* layout) {
  TORCH_CHECK(t.dim() == 2, op, ": ", name, " must be ", layout, "; got ", sizes_of(t));
  check_floating(op, name, t);
  return t.contiguous();
}

// The tables checked against the rows `t` (x forward, grad_out backward), pointers into `keep`.
template <class Real>
mace::ElementLinearTables<Real> tables_of(const char* op, const at::Tensor& t, const at::Tensor& species,
                                          const at::Tensor& weights, const at::Tensor& paths, int64_t in_dim,
                                          int64_t out_dim, std::vector<at::Tensor>& keep) {
  check_species(op, species, t.size(0), "n = ");
  TORCH_CHECK(weights.dim() == 2 && weights.scalar_type() == t.scalar_type(), op, ": weights must be ",
              t.scalar_type(), " [elements, weights per element]; got ", weights.scalar_type(), " ",
              sizes_of(weights), "; ", kTablesHint);
  TORCH_CHECK(paths.dim() == 2 && paths.size(1) == mace::kElementLinearPathFields && paths.scalar_type() == at::kLong,
              op, ": paths must be int64 [P, ", mace::kElementLinearPathFields, "]; got ", paths.scalar_type(), " ",
              sizes_of(paths), "; ", kTablesHint);
  for (const at::Tensor* other : {&species, &weights, &paths})
    TORCH_CHECK(other->device() == t.device(), op, ": the tables and species must be on ", t.device(),
                " with the features; one is on ", other->device(), " (move the module, whose tables are buffers)");
  keep = {weights.contiguous(), paths.contiguous()};
  mace::ElementLinearTables<Real> tables;
  tables.weights = keep[0].data_ptr<Real>();
  tables.paths = keep[1].data_ptr<int64_t>();
  tables.n_paths = paths.size(0);
  tables.elements = weights.size(0);
  tables.per_element = weights.size(1);
  tables.in_dim = in_dim;
  tables.out_dim = out_dim;
  if (t.is_cpu()) {
    const std::string error =
        mace::element_linear_table_error(tables.paths, tables.n_paths, tables.per_element, in_dim, out_dim);
    TORCH_CHECK(error.empty(), op, ": ", error, "; ", kTablesHint);
    check_species_range(op, species, tables.elements);
  }
  return tables;
}

// The op (rows x, `width` out_dim) or, transposed, its backward (rows grad_out, `width` in_dim):
// the same product of each node's rows with its element's matrices, read the other way round.
at::Tensor product(const char* op, const at::Tensor& rows, const at::Tensor& species, const at::Tensor& weights,
                   const at::Tensor& paths, int64_t width, bool transposed) {
  const at::Tensor s = species.contiguous();
  // Paths into the same output add; an output no path reaches is zero.
  at::Tensor result = at::zeros({rows.size(0), width}, rows.options());
  AT_DISPATCH_FLOATING_TYPES(rows.scalar_type(), "element_linear", [&] {
    std::vector<at::Tensor> keep;
    const auto tables = tables_of<scalar_t>(op, rows, s, weights, paths, transposed ? width : rows.size(1),
                                            transposed ? rows.size(1) : width, keep);
    // The CPU backward multiplies by the matrices transposed, once per call; the CUDA kernel reads
    // them as they are.
    const std::vector<scalar_t> matrices_t =
        transposed && rows.is_cpu() ? mace::element_linear_transposed(tables) : std::vector<scalar_t>();
    const scalar_t* in = rows.data_ptr<scalar_t>();
    scalar_t* out = result.data_ptr<scalar_t>();
    // The CPU threads split the nodes (positions in the grouped order).
    run_kernels(
        rows, s, tables.elements, rows.size(0), 64,
        [&](const mace::NodesByElement& nodes, int64_t begin, int64_t end) {
          if (transposed)
            mace::element_linear_backward_cpu<scalar_t>(tables, matrices_t.data(), in, nodes, begin, end, out);
          else
            mace::element_linear_cpu<scalar_t>(tables, in, nodes, begin, end, out);
        },
        [&](void* stream) {
          const int64_t* e = s.data_ptr<int64_t>();
          if (transposed)
            mace::element_linear_backward_cuda<scalar_t>(tables, in, e, rows.size(0), out, stream);
          else
            mace::element_linear_cuda<scalar_t>(tables, in, e, rows.size(0), out, stream);
        });
  });
  return result;
}

at::Tensor element_linear(const at::Tensor& x, const at::Tensor& species, const at::Tensor& weights,
                          const at::Tensor& paths, int64_t out_dim) {
  return product(kForward, rows_of(kForward, "x", x, "[n, in_dim] (e3nn's layout)"), species, weights, paths, out_dim,
                 false);
}

at::Tensor element_linear_backward(const at::Tensor& grad_out, const at::Tensor& species, const at::Tensor& weights,
                                   const at::Tensor& paths, int64_t in_dim) {
  return product(kBackward, rows_of(kBackward, "grad_out", grad_out, "[n, out_dim]"), species, weights, paths, in_dim,
                 true);
}

// ---- autograd --------------------------------------------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
// Both ops' schema: (rows, species, weights, paths, the result's width) -> the result.
using ElementLinearOp = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t);

struct ElementLinearBackwardFunction : torch::autograd::Function<ElementLinearBackwardFunction> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad_out, const at::Tensor& species,
                            const at::Tensor& weights, const at::Tensor& paths, int64_t in_dim) {
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = typed_op<ElementLinearOp>(kBackward);
    return op.call(grad_out, species, weights, paths, in_dim);
  }
  static variable_list backward(AutogradContext*, variable_list) {
    no_second_derivative(kBackward, "skip_tp");
  }
};

struct ElementLinearFunction : torch::autograd::Function<ElementLinearFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& species,
                            const at::Tensor& weights, const at::Tensor& paths, int64_t out_dim) {
    // Linear in x: the backward needs the tables and x's width, not x. The width as a SymInt:
    // x.size() would pin every size of a tensor traced with symbolic sizes, the rows' too.
    ctx->save_for_backward({species, weights, paths});
    ctx->saved_data["in_dim"] = x.sym_size(1);
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = typed_op<ElementLinearOp>(kForward);
    return op.call(x, species, weights, paths, out_dim);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor grad_x = ElementLinearBackwardFunction::apply(grads[0], saved[0], saved[1], saved[2],
                                                                   ctx->saved_data["in_dim"].toSymInt().guard_int(__FILE__, __LINE__));
    return {grad_x, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor element_linear_autograd(const at::Tensor& x, const at::Tensor& species, const at::Tensor& weights,
                                   const at::Tensor& paths, int64_t out_dim) {
  return ElementLinearFunction::apply(x, species, weights, paths, out_dim);
}

at::Tensor element_linear_backward_autograd(const at::Tensor& grad_out, const at::Tensor& species,
                                            const at::Tensor& weights, const at::Tensor& paths, int64_t in_dim) {
  return ElementLinearBackwardFunction::apply(grad_out, species, weights, paths, in_dim);
}

}  // namespace
}  // namespace distspec::models::torch_kind

TORCH_LIBRARY_FRAGMENT(distspec_mace, m) {
  m.def("element_linear(Tensor x, Tensor species, Tensor weights, Tensor paths, int out_dim) -> Tensor");
  m.def("element_linear_backward(Tensor grad_out, Tensor species, Tensor weights, Tensor paths, int in_dim) -> Tensor");
}

DISTSPEC_MACE_OP_KERNELS(element_linear)
