// distspec_mace::symmetric_contraction and its backward (doc/mace_kernels.md): the torch binding
// of the kernels in models/mace/symmetric_contraction.h. The autograd kernel's backward calls the
// backward op through the dispatcher, so that make_fx traces both into an exported graph; the
// backward op has no derivative of its own (forces need first derivatives only).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "models/mace/symmetric_contraction.h"
#include "models/torch/mace_op_util.h"

namespace distspec::models::torch_kind {
namespace {

DISTSPEC_MACE_OP_NAMES(symmetric_contraction)
// How a caller gets tables that keep the contract.
constexpr const char* kTablesHint =
    "build the tables with distspec_export.mace_kernels.symmetric_contraction.SymmetricContraction.from_mace";

void check_table(const char* op, const char* name, const at::Tensor& t, at::ScalarType dtype,
                 const std::vector<int64_t>& sizes, const at::Tensor& x) {
  TORCH_CHECK(t.scalar_type() == dtype && t.sizes().vec() == sizes, op, ": ", name, " must be ", c10::toString(dtype),
              " ", sizes_of(sizes), "; got ", t.scalar_type(), " ", sizes_of(t), "; ",
              kTablesHint);
  TORCH_CHECK(t.device() == x.device(), op, ": ", name, " is on ", t.device(), ", x on ", x.device(),
              "; move the module (its tables are buffers) to x's device");
}

// The inputs checked against each other, as the kernels' tables (pointers into the contiguous
// tensors held in `keep`).
template <class Real>
mace::SymmetricContractionTables<Real> tables_of(const char* op, const at::Tensor& x, const at::Tensor& species,
                                                 const at::Tensor& coefficients, const at::Tensor& monomials,
                                                 const at::Tensor& term_offsets, const at::Tensor& term_outputs,
                                                 at::IntArrayRef irrep_dims, std::vector<at::Tensor>& keep) {
  check_species(op, species, x.size(0), "n = x.size(0) = ");
  TORCH_CHECK(species.device() == x.device(), op, ": species is on ", species.device(), ", x on ", x.device());
  TORCH_CHECK(coefficients.dim() == 3, op, ": coefficients must be [elements, terms, channels]; got ",
              sizes_of(coefficients), "; ", kTablesHint);
  const int64_t elements = coefficients.size(0), terms = coefficients.size(1);
  const int64_t n_monomials = monomials.dim() == 2 ? monomials.size(0) : -1;
  check_table(op, "coefficients", coefficients, x.scalar_type(), {elements, terms, x.size(1)}, x);
  check_table(op, "monomials", monomials, at::kInt, {std::max<int64_t>(n_monomials, 0), 3}, x);
  check_table(op, "term_offsets", term_offsets, at::kInt, {n_monomials + 1}, x);
  check_table(op, "term_outputs", term_outputs, at::kInt, {terms}, x);
  for (int64_t d : irrep_dims)
    TORCH_CHECK(d > 0 && d % 2 == 1 && d <= 7, op, ": irrep_dims holds ", d,
                "; expected the dimensions 2l + 1 (l <= 3) of the output irreps");
  const mace::OutputLayout layout = mace::output_layout(irrep_dims.data(), irrep_dims.size(), x.size(1));
  TORCH_CHECK(layout.count > 0 || irrep_dims.empty(), op, ": the output irreps ", irrep_dims, " have more than ",
              mace::kMaxOutputComponents, " components; split the contraction into several ops");
  if (x.is_cpu()) {
    const std::string error = mace::symmetric_contraction_table_error(
        monomials.contiguous().data_ptr<int32_t>(), term_offsets.contiguous().data_ptr<int32_t>(),
        term_outputs.contiguous().data_ptr<int32_t>(), n_monomials, terms, x.size(2), layout.count);
    TORCH_CHECK(error.empty(), op, ": ", error, "; ", kTablesHint);
    check_species_range(op, species, elements);
  }
  keep = {coefficients.contiguous(), monomials.contiguous(), term_offsets.contiguous(), term_outputs.contiguous()};
  mace::SymmetricContractionTables<Real> tables;
  tables.coefficients = keep[0].data_ptr<Real>();
  tables.monomials = keep[1].data_ptr<int32_t>();
  tables.term_offsets = keep[2].data_ptr<int32_t>();
  tables.term_outputs = keep[3].data_ptr<int32_t>();
  tables.elements = elements;
  tables.terms = terms;
  tables.n_monomials = n_monomials;
  tables.channels = x.size(1);
  tables.components = x.size(2);
  tables.outputs = layout;
  return tables;
}

// x checked and contiguous.
at::Tensor features_of(const char* op, const at::Tensor& x) {
  TORCH_CHECK(x.dim() == 3, op, ": x must be [n, channels, D] (mace's node features before the product, ",
              "reshape_irreps' layout); got ", sizes_of(x));
  check_floating(op, "x", x);
  return x.contiguous();
}

// The output's components per channel: the sum of the output irreps' dimensions.
int64_t components_of(at::IntArrayRef irrep_dims) {
  int64_t out_dim = 0;
  for (int64_t d : irrep_dims) out_dim += d;
  return out_dim;
}

// One call's kernels with the tables of the call (checked against x): cpu(tables, nodes, begin, end)
// on the CPU threads, which split the channel blocks, or cuda(tables, stream).
template <class Real, class Cpu, class Cuda>
void contract(const char* op, const at::Tensor& x, const at::Tensor& species, const at::Tensor& coefficients,
              const at::Tensor& monomials, const at::Tensor& term_offsets, const at::Tensor& term_outputs,
              at::IntArrayRef irrep_dims, Cpu&& cpu, Cuda&& cuda) {
  std::vector<at::Tensor> keep;
  const auto tables =
      tables_of<Real>(op, x, species, coefficients, monomials, term_offsets, term_outputs, irrep_dims, keep);
  run_kernels(
      x, species, tables.elements, mace::channel_blocks<Real>(tables.channels), 1,
      [&](const mace::NodesByElement& nodes, int64_t begin, int64_t end) { cpu(tables, nodes, begin, end); },
      [&](void* stream) { cuda(tables, stream); });
}

at::Tensor symmetric_contraction(const at::Tensor& x_in, const at::Tensor& species, const at::Tensor& coefficients,
                                 const at::Tensor& monomials, const at::Tensor& term_offsets,
                                 const at::Tensor& term_outputs, at::IntArrayRef irrep_dims) {
  const at::Tensor x = features_of(kForward, x_in), s = species.contiguous();
  at::Tensor out = at::empty({x.size(0), x.size(1) * components_of(irrep_dims)}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "symmetric_contraction", [&] {
    using Tables = mace::SymmetricContractionTables<scalar_t>;
    contract<scalar_t>(
        kForward, x, s, coefficients, monomials, term_offsets, term_outputs, irrep_dims,
        [&](const Tables& tables, const mace::NodesByElement& nodes, int64_t begin, int64_t end) {
          mace::symmetric_contraction_cpu<scalar_t>(tables, x.data_ptr<scalar_t>(), nodes, begin, end,
                                                    out.data_ptr<scalar_t>());
        },
        [&](const Tables& tables, void* stream) {
          mace::symmetric_contraction_cuda<scalar_t>(tables, x.data_ptr<scalar_t>(), s.data_ptr<int64_t>(),
                                                     x.size(0), out.data_ptr<scalar_t>(), stream);
        });
  });
  return out;
}

at::Tensor symmetric_contraction_backward(const at::Tensor& grad_out_in, const at::Tensor& x_in,
                                          const at::Tensor& species, const at::Tensor& coefficients,
                                          const at::Tensor& monomials, const at::Tensor& term_offsets,
                                          const at::Tensor& term_outputs, at::IntArrayRef irrep_dims) {
  const at::Tensor x = features_of(kBackward, x_in), s = species.contiguous();
  const int64_t out_dim = components_of(irrep_dims);
  TORCH_CHECK(grad_out_in.sizes() == at::IntArrayRef({x.size(0), x.size(1) * out_dim}) &&
                  grad_out_in.scalar_type() == x.scalar_type() && grad_out_in.device() == x.device(),
              kBackward, ": grad_out must be ", x.scalar_type(), " [", x.size(0), ", ", x.size(1) * out_dim, "] on ",
              x.device(), " (the forward's output); got ", grad_out_in.scalar_type(), " ", sizes_of(grad_out_in),
              " on ", grad_out_in.device());
  const at::Tensor grad_out = grad_out_in.contiguous();
  at::Tensor grad_x = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "symmetric_contraction_backward", [&] {
    using Tables = mace::SymmetricContractionTables<scalar_t>;
    const scalar_t* g = grad_out.data_ptr<scalar_t>();
    contract<scalar_t>(
        kBackward, x, s, coefficients, monomials, term_offsets, term_outputs, irrep_dims,
        [&](const Tables& tables, const mace::NodesByElement& nodes, int64_t begin, int64_t end) {
          mace::symmetric_contraction_backward_cpu<scalar_t>(tables, g, x.data_ptr<scalar_t>(), nodes, begin, end,
                                                             grad_x.data_ptr<scalar_t>());
        },
        [&](const Tables& tables, void* stream) {
          mace::symmetric_contraction_backward_cuda<scalar_t>(tables, g, x.data_ptr<scalar_t>(), s.data_ptr<int64_t>(),
                                                              x.size(0), grad_x.data_ptr<scalar_t>(), stream);
        });
  });
  return grad_x;
}

// ---- autograd --------------------------------------------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The backward op as a node of its own graph, so that differentiating it says why it cannot be.
struct SymmetricContractionBackwardFunction : torch::autograd::Function<SymmetricContractionBackwardFunction> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad_out, const at::Tensor& x,
                            const at::Tensor& species, const at::Tensor& coefficients, const at::Tensor& monomials,
                            const at::Tensor& term_offsets, const at::Tensor& term_outputs,
                            std::vector<int64_t> irrep_dims) {
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op =
        typed_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const at::Tensor&, const at::Tensor&, const at::Tensor&, at::IntArrayRef)>(kBackward);
    return op.call(grad_out, x, species, coefficients, monomials, term_offsets, term_outputs, irrep_dims);
  }
  static variable_list backward(AutogradContext*, variable_list) {
    no_second_derivative(kBackward, "SymmetricContraction");
  }
};

struct SymmetricContractionFunction : torch::autograd::Function<SymmetricContractionFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& species,
                            const at::Tensor& coefficients, const at::Tensor& monomials,
                            const at::Tensor& term_offsets, const at::Tensor& term_outputs,
                            at::IntArrayRef irrep_dims) {
    ctx->save_for_backward({x, species, coefficients, monomials, term_offsets, term_outputs});
    ctx->saved_data["irrep_dims"] = irrep_dims.vec();
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = typed_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                               const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                               at::IntArrayRef)>(kForward);
    return op.call(x, species, coefficients, monomials, term_offsets, term_outputs, irrep_dims);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor grad_x = SymmetricContractionBackwardFunction::apply(
        grads[0], saved[0], saved[1], saved[2], saved[3], saved[4], saved[5],
        ctx->saved_data["irrep_dims"].toIntVector());
    // The tables are constants of the export: no gradient for them.
    return {grad_x, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor symmetric_contraction_autograd(const at::Tensor& x, const at::Tensor& species,
                                          const at::Tensor& coefficients, const at::Tensor& monomials,
                                          const at::Tensor& term_offsets, const at::Tensor& term_outputs,
                                          at::IntArrayRef irrep_dims) {
  return SymmetricContractionFunction::apply(x, species, coefficients, monomials, term_offsets, term_outputs,
                                             irrep_dims);
}

at::Tensor symmetric_contraction_backward_autograd(const at::Tensor& grad_out, const at::Tensor& x,
                                                   const at::Tensor& species, const at::Tensor& coefficients,
                                                   const at::Tensor& monomials, const at::Tensor& term_offsets,
                                                   const at::Tensor& term_outputs, at::IntArrayRef irrep_dims) {
  return SymmetricContractionBackwardFunction::apply(grad_out, x, species, coefficients, monomials, term_offsets,
                                                     term_outputs, irrep_dims.vec());
}

}  // namespace
}  // namespace distspec::models::torch_kind

TORCH_LIBRARY_FRAGMENT(distspec_mace, m) {
  m.def("symmetric_contraction(Tensor x, Tensor species, Tensor coefficients, Tensor monomials, "
        "Tensor term_offsets, Tensor term_outputs, int[] irrep_dims) -> Tensor");
  m.def("symmetric_contraction_backward(Tensor grad_out, Tensor x, Tensor species, Tensor coefficients, "
        "Tensor monomials, Tensor term_offsets, Tensor term_outputs, int[] irrep_dims) -> Tensor");
}

DISTSPEC_MACE_OP_KERNELS(symmetric_contraction)
