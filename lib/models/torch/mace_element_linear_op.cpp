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

namespace mace = distspec::models::mace;

constexpr const char* kForward = "distspec_mace::element_linear";
constexpr const char* kBackward = "distspec_mace::element_linear_backward";
constexpr const char* kTablesHint =
    "build the tables with distspec_export.mace_kernels.element_linear.ElementLinear.from_mace";

void check_rows(const char* op, const char* name, const at::Tensor& t, int64_t width) {
  TORCH_CHECK(t.dim() == 2 && t.size(1) == width, op, ": ", name, " must be [n, ", width, "] (e3nn's layout of the ",
              "irreps); got ", sizes_of(t));
  TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, op, ": ", name,
              " must be float32 or float64; got ", t.scalar_type());
#ifdef DISTSPEC_WITH_CUDA
  TORCH_CHECK(t.is_cpu() || t.is_cuda(), op, ": ", name, " is on ", t.device(), "; the kernels run on the cpu and cuda");
#else
  TORCH_CHECK(t.is_cpu(), op, ": ", name, " is on ", t.device(), ", and this library was built without CUDA");
#endif
}

// The tables checked against the rows `t` (x forward, grad_out backward), pointers into `keep`.
template <class Real>
mace::ElementLinearTables<Real> tables_of(const char* op, const at::Tensor& t, const at::Tensor& species,
                                          const at::Tensor& weights, const at::Tensor& paths, int64_t in_dim,
                                          int64_t out_dim, std::vector<at::Tensor>& keep) {
  TORCH_CHECK(species.dim() == 1 && species.size(0) == t.size(0) && species.scalar_type() == at::kLong, op,
              ": species must be int64 [n] with n = ", t.size(0), "; got ", species.scalar_type(), " ",
              sizes_of(species), " (each node's index into the exported elements)");
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
    if (species.numel()) {
      const auto [low, high] = at::aminmax(species);
      TORCH_CHECK(low.item<int64_t>() >= 0 && high.item<int64_t>() < tables.elements, op, ": species holds values in [",
                  low.item<int64_t>(), ", ", high.item<int64_t>(), "], outside [0, ", tables.elements,
                  "): the index of each node's element among the ", tables.elements,
                  " exported elements (the rows the tables were built for)");
    }
  }
  return tables;
}

at::Tensor element_linear(const at::Tensor& x_in, const at::Tensor& species, const at::Tensor& weights,
                          const at::Tensor& paths, int64_t out_dim) {
  TORCH_CHECK(x_in.dim() == 2, kForward, ": x must be [n, in_dim] (e3nn's layout); got ", sizes_of(x_in));
  check_rows(kForward, "x", x_in, x_in.size(1));
  const at::Tensor x = x_in.contiguous(), s = species.contiguous();
  // Paths into the same output add; an output no path reaches is zero.
  at::Tensor out = at::zeros({x.size(0), out_dim}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "element_linear", [&] {
    std::vector<at::Tensor> keep;
    const auto tables = tables_of<scalar_t>(kForward, x, s, weights, paths, x.size(1), out_dim, keep);
    if (x.size(0) == 0) return;
#ifdef DISTSPEC_WITH_CUDA
    if (x.is_cuda()) {
      mace::element_linear_cuda<scalar_t>(tables, x.data_ptr<scalar_t>(), s.data_ptr<int64_t>(), x.size(0),
                                          out.data_ptr<scalar_t>(), current_stream(x));
      return;
    }
#endif
    const mace::NodesByElement nodes = mace::group_by_element(s.data_ptr<int64_t>(), x.size(0), tables.elements);
    at::parallel_for(0, x.size(0), 64, [&](int64_t begin, int64_t end) {
      mace::element_linear_cpu<scalar_t>(tables, x.data_ptr<scalar_t>(), nodes, begin, end, out.data_ptr<scalar_t>());
    });
  });
  return out;
}

at::Tensor element_linear_backward(const at::Tensor& grad_out_in, const at::Tensor& species, const at::Tensor& weights,
                                   const at::Tensor& paths, int64_t in_dim) {
  TORCH_CHECK(grad_out_in.dim() == 2, kBackward, ": grad_out must be [n, out_dim]; got ", sizes_of(grad_out_in));
  check_rows(kBackward, "grad_out", grad_out_in, grad_out_in.size(1));
  const at::Tensor grad_out = grad_out_in.contiguous(), s = species.contiguous();
  at::Tensor grad_x = at::zeros({grad_out.size(0), in_dim}, grad_out.options());
  AT_DISPATCH_FLOATING_TYPES(grad_out.scalar_type(), "element_linear_backward", [&] {
    std::vector<at::Tensor> keep;
    const auto tables = tables_of<scalar_t>(kBackward, grad_out, s, weights, paths, in_dim, grad_out.size(1), keep);
    if (grad_out.size(0) == 0) return;
#ifdef DISTSPEC_WITH_CUDA
    if (grad_out.is_cuda()) {
      mace::element_linear_backward_cuda<scalar_t>(tables, grad_out.data_ptr<scalar_t>(), s.data_ptr<int64_t>(),
                                                   grad_out.size(0), grad_x.data_ptr<scalar_t>(),
                                                   current_stream(grad_out));
      return;
    }
#endif
    const std::vector<scalar_t> transposed = mace::element_linear_transposed(tables);
    const mace::NodesByElement nodes = mace::group_by_element(s.data_ptr<int64_t>(), grad_out.size(0), tables.elements);
    at::parallel_for(0, grad_out.size(0), 64, [&](int64_t begin, int64_t end) {
      mace::element_linear_backward_cpu<scalar_t>(tables, transposed.data(), grad_out.data_ptr<scalar_t>(), nodes,
                                                  begin, end, grad_x.data_ptr<scalar_t>());
    });
  });
  return grad_x;
}

// ---- autograd --------------------------------------------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct ElementLinearBackwardFunction : torch::autograd::Function<ElementLinearBackwardFunction> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad_out, const at::Tensor& species,
                            const at::Tensor& weights, const at::Tensor& paths, int64_t in_dim) {
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow(kBackward, "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                 const at::Tensor&, int64_t)>();
    return op.call(grad_out, species, weights, paths, in_dim);
  }
  static variable_list backward(AutogradContext*, variable_list) {
    TORCH_CHECK(false, kBackward,
                ": second derivatives are not implemented (the kernels give forces and virials, first derivatives "
                "of the energy); differentiate mace-torch's own skip_tp for higher ones");
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
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow(kForward, "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                 const at::Tensor&, int64_t)>();
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
