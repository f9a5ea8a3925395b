#include "models/torch/halo_ops.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "models/model_error.h"
#include "models/torch/torch_runtime.h"

namespace distspec::models::torch_kind {
namespace {

// The one piece of global mutable state besides the op registries: torch calls a kernel with
// the arguments of its schema only, and nvalchemi's schemas cannot name the exchange of the
// current step, so it reaches the kernels through here. Process-wide rather than thread-local:
// torch's autograd engine runs the backward of device tensors on threads of its own while the
// thread that called the model waits for them. A host runs one model at a time (LAMMPS calls
// the pair styles of a step one after another).
std::atomic<ActiveDispatcher*> g_active{nullptr};

// The two namespaces the ops are registered under: nvalchemi's (what exported graphs call) and
// DISTSPEC's own twin (for graphs written against DISTSPEC only).
constexpr const char* kNamespaces[] = {"nvalchemi", "distspec"};

std::string qualname(int ns, const char* op) { return std::string(kNamespaces[ns]) + "::" + op; }

[[noreturn]] void fail(const std::string& op, const std::string& message, const std::string& hint = {}) {
  throw Error(model_error_id::op_args, "", op + ": " + message, hint);
}

std::string shape_of(const at::Tensor& t) {
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) text += (d ? ", " : "") + std::to_string(t.size(d));
  return text + "]";
}

}  // namespace

// Friend of ActiveDispatcher: the kernels' view of the active scope.
struct ActiveAccess {
  static Dispatcher& dispatcher(const std::string& op) {
    ActiveDispatcher* active = g_active.load();
    if (!active)
      fail(op, "called with no halo exchange active",
           "the op runs inside a DISTSPEC torch model (pair_style distspec), which attaches the step's exchange");
    return *active->dispatch_;
  }
  // The first error of the scope wins: a graph runtime may rethrow it as something vaguer.
  static void record(std::exception_ptr e) {
    if (ActiveDispatcher* active = g_active.load(); active && !active->kernel_error_) active->kernel_error_ = e;
  }
  static void record(const HaloCall& call) {
    if (ActiveDispatcher* active = g_active.load(); active && active->calls_) active->calls_->push_back(call);
  }
};

ActiveDispatcher::ActiveDispatcher(Dispatcher& dispatch) : dispatch_(&dispatch), previous_(g_active.load()) {
  g_active.store(this);
}

ActiveDispatcher::~ActiveDispatcher() { g_active.store(previous_); }

namespace {

// Runs a kernel body, recording its error in the active scope before torch sees it.
template <class F>
auto guarded(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    ActiveAccess::record(std::current_exception());
    throw;
  }
}

// The routing tensors say how nvalchemi's rows [owned | ghosts | pad | dead] are filled; under a
// host whose exchange follows its own pattern they must describe the same rows (doc/torch_models.md:
// send_index [0], recv_dest [n_halo], recv_real [n_halo], n_owned a 0-dim scalar). The shapes
// alone fix the owned count (rows - n_halo); a device n_owned is not read, since reading it would
// wait for every kernel queued before it.
void check_routing(const std::string& op, const HaloExchange& halo, const at::Tensor& rows, const char* rows_name,
                   const at::Tensor& send_index, const at::Tensor& recv_dest, const at::Tensor& recv_real,
                   const at::Tensor& n_owned) {
  const auto n_halo = static_cast<int64_t>(halo.n_halo());
  const auto n_all = static_cast<int64_t>(halo.n_rows());
  const std::string step = "this step's rows are n_owned + n_halo = " + std::to_string(halo.n_owned()) + " + " +
                           std::to_string(n_halo);
  if (rows.dim() < 1 || rows.size(0) != n_all)
    fail(op, std::string(rows_name) + " has shape " + shape_of(rows) + ", but " + step,
         "per-node inputs span owned and halo rows (positions' first dimension)");
  if (rows.scalar_type() != at::kFloat && rows.scalar_type() != at::kDouble)
    fail(op, std::string(rows_name) + " is " + std::string(c10::toString(rows.scalar_type())) +
                 "; halo exchanges move float32 or float64 rows");
  if (n_owned.numel() != 1 || !at::isIntegralType(n_owned.scalar_type(), false))
    fail(op, "n_owned must be one integer, found " + std::string(c10::toString(n_owned.scalar_type())) + " of shape " +
                 shape_of(n_owned));
  if (n_owned.device().is_cpu())
    if (const int64_t given = n_owned.item<int64_t>(); given != static_cast<int64_t>(halo.n_owned()))
      fail(op, "n_owned is " + std::to_string(given) + ", but " + step, "pass the graph's n_owned input through");
  if (send_index.dim() != 1)
    fail(op, "send_index must be one-dimensional, found shape " + shape_of(send_index));
  for (auto [name, t] : {std::pair{"recv_dest", &recv_dest}, {"recv_real", &recv_real}})
    if (t->dim() != 1 || t->size(0) != n_halo)
      fail(op, std::string(name) + " has shape " + shape_of(*t) + ", expected [" + std::to_string(n_halo) + "]: " + step,
           "pass the graph's routing inputs through");
}

// A contiguous copy of `in` viewed as rows x width, exchanged by `exchange` and returned on in's
// device: the op's fresh output (the schema promises one), made by one copy. Device tensors stay
// on the device where the exchange takes device rows, and are staged through the host where it
// does not.
template <class Exchanger>
at::Tensor exchanged_copy(const at::Tensor& in, HaloExchange& halo, Exchanger&& exchange) {
  const bool stays = in.device().is_cpu() || halo.accepts_device_rows();
  at::Tensor rows = stays ? in.clone(at::MemoryFormat::Contiguous) : in.to(at::kCPU).contiguous();
  // The exchange queues its device work behind the copy (and the graph's kernels before it).
  if (rows.device().is_cuda()) halo.set_stream(current_stream(rows.device()));
  int64_t width = 1;
  for (int64_t d = 1; d < rows.dim(); ++d) width *= rows.size(d);
  const auto n = static_cast<std::size_t>(rows.size(0));
  if (rows.scalar_type() == at::kDouble)
    exchange(Rows<double>{rows.data_ptr<double>(), n, static_cast<int>(width)});
  else
    exchange(Rows<float>{rows.data_ptr<float>(), n, static_cast<int>(width)});
  return stays ? rows : rows.to(in.device());
}

using Exchange = HaloCall::Kind;
constexpr const char* kExchangeOps[] = {"halo_forward_static", "halo_scatter_correct_static",
                                        "halo_forward_static_backward"};

// The dispatcher's primitive of each exchange op.
template <Exchange kind, class T>
void exchange(Dispatcher& dispatch, Rows<T> rows) {
  if constexpr (kind == Exchange::forward) dispatch.before_gather(rows);
  if constexpr (kind == Exchange::scatter_correct) dispatch.after_scatter(rows);
  if constexpr (kind == Exchange::forward_adjoint) dispatch.before_gather_adjoint(rows);
}

template <int NS, Exchange kind>
at::Tensor exchange_kernel(const at::Tensor& in, const at::Tensor& send_index, const at::Tensor& recv_dest,
                           const at::Tensor& recv_real, const at::Tensor& n_owned, int64_t /*world_size*/) {
  return guarded([&] {
    const std::string op = qualname(NS, kExchangeOps[static_cast<int>(kind)]);
    Dispatcher& dispatch = ActiveAccess::dispatcher(op);
    check_routing(op, dispatch.halo(), in, kind == Exchange::forward_adjoint ? "grad_out" : "padded_in", send_index,
                  recv_dest, recv_real, n_owned);
    return exchanged_copy(in, dispatch.halo(), [&](auto rows) {
      exchange<kind>(dispatch, rows);
      ActiveAccess::record(HaloCall{kind, rows.width, std::is_same_v<decltype(rows), Rows<float>>});
    });
  });
}

// The rows per_system_reduce sums: the owned ones (local_vals may span halo rows too).
int64_t owned_rows(const HaloExchange& halo, const at::Tensor& local_vals) {
  return std::min<int64_t>(local_vals.size(0), static_cast<int64_t>(halo.n_owned()));
}

void check_reduce_args(const std::string& op, const at::Tensor& local_vals, const at::Tensor& system_index,
                       int64_t n_systems) {
  if (local_vals.dim() < 1 || !at::isFloatingType(local_vals.scalar_type()))
    fail(op, "local_vals must be floating point with one row per atom, found " +
                 std::string(c10::toString(local_vals.scalar_type())) + " of shape " + shape_of(local_vals));
  if (system_index.dim() != 1 || system_index.size(0) != local_vals.size(0) ||
      !at::isIntegralType(system_index.scalar_type(), false))
    fail(op, "system_index must be an integer vector with one entry per row of local_vals " + shape_of(local_vals) +
                 ", found " + std::string(c10::toString(system_index.scalar_type())) + " of shape " +
                 shape_of(system_index));
  if (n_systems < 0) fail(op, "n_systems is " + std::to_string(n_systems));
}

// system_index's entries for the first `rows` rows, as int64 on its device; checked against
// [0, n_systems) where it is host memory (on one GPU rank a check would wait for the graph's
// kernels; the graph made the index itself).
at::Tensor system_rows(const std::string& op, const at::Tensor& system_index, int64_t rows, int64_t n_systems) {
  const at::Tensor index = system_index.slice(0, 0, rows).to(at::kLong);
  if (index.device().is_cpu() && rows > 0) {
    const int64_t* s = index.contiguous().data_ptr<int64_t>();
    for (int64_t i = 0; i < rows; ++i)
      if (s[i] < 0 || s[i] >= n_systems)
        fail(op, "system_index[" + std::to_string(i) + "] = " + std::to_string(s[i]) + " is not in [0, " +
                     std::to_string(n_systems) + ")");
  }
  return index;
}

// (n_systems, *F) of fp64 sums over ranks of the owned rows of each system. On one rank there is
// nothing to sum over ranks: the sums stay on the rows' device (no download, no wait for the
// graph); on more they meet in host memory, where the exchange all-reduces them.
template <int NS>
at::Tensor per_system_reduce_kernel(const at::Tensor& local_vals, const at::Tensor& system_index, int64_t n_systems) {
  return guarded([&] {
    const std::string op = qualname(NS, "per_system_reduce");
    check_reduce_args(op, local_vals, system_index, n_systems);
    Dispatcher& dispatch = ActiveAccess::dispatcher(op);
    const int64_t rows = owned_rows(dispatch.halo(), local_vals);
    std::vector<int64_t> shape = local_vals.sizes().vec();
    shape[0] = n_systems;
    int64_t width = 1;
    for (std::size_t d = 1; d < shape.size(); ++d) width *= shape[d];
    const bool one_rank = dispatch.halo().n_ranks() == 1;
    const at::Device where = one_rank ? local_vals.device() : at::Device(at::kCPU);
    const at::Tensor index = system_rows(op, system_index.to(where), rows, n_systems);
    const at::Tensor vals = local_vals.slice(0, 0, rows).to(where, at::kDouble).reshape({rows, width});
    at::Tensor acc = at::zeros({n_systems, width}, vals.options()).index_add_(0, index, vals);
    if (!one_rank) dispatch.all_reduce_sum(acc.data_ptr<double>(), static_cast<std::size_t>(acc.numel()));
    // Recorded on one rank too: a rank without atoms of a run of several makes it (the probe).
    ActiveAccess::record(HaloCall{Exchange::all_reduce, static_cast<int>(acc.numel()), false});
    return acc.reshape(shape).to(local_vals.device(), local_vals.scalar_type());
  });
}

// The adjoint of per_system_reduce when every rank differentiates its own energy: rank r holds
// dE_r/d(sum), the owned rows' gradient is the sum over ranks of it, gathered by system; halo
// rows were never summed and get none. One row per entry of system_index. On one rank the sum
// over ranks is grad_out itself, and the gather stays on its device.
template <int NS>
at::Tensor per_system_reduce_adjoint(const at::Tensor& grad_out, const at::Tensor& system_index) {
  return guarded([&] {
    const std::string op = qualname(NS, "per_system_reduce_backward");
    if (grad_out.dim() < 1 || !at::isFloatingType(grad_out.scalar_type()))
      fail(op, "grad_out must be floating point with one row per system, found " +
                   std::string(c10::toString(grad_out.scalar_type())) + " of shape " + shape_of(grad_out));
    if (system_index.dim() != 1 || !at::isIntegralType(system_index.scalar_type(), false))
      fail(op, "system_index must be an integer vector, found " + std::string(c10::toString(system_index.scalar_type())) +
                   " of shape " + shape_of(system_index));
    Dispatcher& dispatch = ActiveAccess::dispatcher(op);
    const bool one_rank = dispatch.halo().n_ranks() == 1;
    const at::Device where = one_rank ? grad_out.device() : at::Device(at::kCPU);
    const int64_t n_rows = system_index.size(0);
    // The all-reduce writes in place, and grad_out is the graph's: a copy of its own then, made
    // by the one conversion (not a conversion and a clone).
    at::Tensor grad = grad_out.to(where, at::kDouble, false, !one_rank).contiguous();
    if (!one_rank) dispatch.all_reduce_sum(grad.data_ptr<double>(), static_cast<std::size_t>(grad.numel()));
    ActiveAccess::record(HaloCall{Exchange::all_reduce, static_cast<int>(grad.numel()), false});
    const int64_t rows = std::min<int64_t>(n_rows, static_cast<int64_t>(dispatch.halo().n_owned()));
    std::vector<int64_t> shape = grad_out.sizes().vec();
    shape[0] = n_rows;
    at::Tensor out = at::zeros(shape, grad.options());
    const at::Tensor index = system_rows(op, system_index.to(where), rows, grad.size(0));
    out.slice(0, 0, rows).copy_(grad.index_select(0, index));
    return out.to(grad_out.device(), grad_out.scalar_type());
  });
}

template <int NS>
at::Tensor keepalive_kernel(const at::Tensor& x, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const at::Tensor&) {
  return x.clone();  // the schema promises a fresh tensor, not a view of x
}

// ---- autograd: each op's backward is its adjoint ------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

template <int NS, Exchange kind>
struct ExchangeFunction : torch::autograd::Function<ExchangeFunction<NS, kind>> {
  // forward <-> its adjoint; the scatter-correction is its own.
  static constexpr Exchange adjoint = kind == Exchange::forward           ? Exchange::forward_adjoint
                                      : kind == Exchange::forward_adjoint ? Exchange::forward
                                                                          : Exchange::scatter_correct;

  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& in, const at::Tensor& send_index,
                            const at::Tensor& recv_dest, const at::Tensor& recv_real, const at::Tensor& n_owned,
                            int64_t world_size) {
    ctx->save_for_backward({send_index, recv_dest, recv_real, n_owned});
    ctx->saved_data["world_size"] = world_size;
    at::AutoDispatchBelowADInplaceOrView below;
    return exchange_kernel<NS, kind>(in, send_index, recv_dest, recv_real, n_owned, world_size);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list routing = ctx->get_saved_variables();
    const int64_t world_size = ctx->saved_data["world_size"].toInt();
    const at::Tensor grad = ExchangeFunction<NS, adjoint>::apply(grads[0], routing[0], routing[1], routing[2],
                                                                 routing[3], world_size);
    return {grad, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

template <int NS, Exchange kind>
at::Tensor exchange_autograd(const at::Tensor& in, const at::Tensor& send_index, const at::Tensor& recv_dest,
                             const at::Tensor& recv_real, const at::Tensor& n_owned, int64_t world_size) {
  return ExchangeFunction<NS, kind>::apply(in, send_index, recv_dest, recv_real, n_owned, world_size);
}

template <int NS>
struct PerSystemReduceFunction : torch::autograd::Function<PerSystemReduceFunction<NS>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& local_vals, const at::Tensor& system_index,
                            int64_t n_systems) {
    ctx->save_for_backward({system_index});
    at::AutoDispatchBelowADInplaceOrView below;
    return per_system_reduce_kernel<NS>(local_vals, system_index, n_systems);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads);
};

// per_system_reduce_backward's own adjoint is per_system_reduce (owned rows summed per system,
// then over ranks), and back: graphs of second derivatives.
template <int NS>
struct PerSystemReduceBackwardFunction : torch::autograd::Function<PerSystemReduceBackwardFunction<NS>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_out, const at::Tensor& system_index) {
    ctx->save_for_backward({system_index});
    ctx->saved_data["systems"] = grad_out.size(0);
    at::AutoDispatchBelowADInplaceOrView below;
    return per_system_reduce_adjoint<NS>(grad_out, system_index);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor system_index = ctx->get_saved_variables()[0];
    return {PerSystemReduceFunction<NS>::apply(grads[0], system_index, ctx->saved_data["systems"].toInt()),
            at::Tensor()};
  }
};

template <int NS>
variable_list PerSystemReduceFunction<NS>::backward(AutogradContext* ctx, variable_list grads) {
  const at::Tensor system_index = ctx->get_saved_variables()[0];
  return {PerSystemReduceBackwardFunction<NS>::apply(grads[0], system_index), at::Tensor(), at::Tensor()};
}

template <int NS>
at::Tensor per_system_reduce_backward_autograd(const at::Tensor& grad_out, const at::Tensor& system_index) {
  return PerSystemReduceBackwardFunction<NS>::apply(grad_out, system_index);
}

template <int NS>
at::Tensor per_system_reduce_autograd(const at::Tensor& local_vals, const at::Tensor& system_index,
                                      int64_t n_systems) {
  return PerSystemReduceFunction<NS>::apply(local_vals, system_index, n_systems);
}

template <int NS>
struct KeepaliveFunction : torch::autograd::Function<KeepaliveFunction<NS>> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x, const at::Tensor& si, const at::Tensor& rd,
                            const at::Tensor& rr, const at::Tensor& no) {
    at::AutoDispatchBelowADInplaceOrView below;
    return keepalive_kernel<NS>(x, si, rd, rr, no);
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0], at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

template <int NS>
at::Tensor keepalive_autograd(const at::Tensor& x, const at::Tensor& si, const at::Tensor& rd, const at::Tensor& rr,
                              const at::Tensor& no) {
  return KeepaliveFunction<NS>::apply(x, si, rd, rr, no);
}

// ---- registration ----------------------------------------------------------------------------

// nvalchemi's schemas, exactly as its PyPI package registers them (doc/torch_models.md).
constexpr const char* kSchemas[] = {
    "halo_forward_static(Tensor padded_in, Tensor send_index, Tensor recv_dest, Tensor recv_real, Tensor n_owned, "
    "SymInt world_size) -> Tensor",
    "halo_scatter_correct_static(Tensor padded_in, Tensor send_index, Tensor recv_dest, Tensor recv_real, "
    "Tensor n_owned, SymInt world_size) -> Tensor",
    "halo_forward_static_backward(Tensor grad_out, Tensor send_index, Tensor recv_dest, Tensor recv_real, "
    "Tensor n_owned, SymInt world_size) -> Tensor",
    "per_system_reduce(Tensor local_vals, Tensor system_index, SymInt n_systems) -> Tensor",
    "per_system_reduce_backward(Tensor grad_out, Tensor system_index) -> Tensor",
    "halo_keepalive(Tensor x, Tensor si, Tensor rd, Tensor rr, Tensor no) -> Tensor",
};

// Kernels for every backend (CompositeExplicitAutograd: they exchange host rows, or device rows
// where the host's exchange takes them) and an autograd kernel above them.
template <int NS>
void define_ops(torch::Library& lib) {
  using c10::DispatchKey;
  for (const char* schema : kSchemas) lib.def(schema);
  lib.impl("halo_forward_static",
           torch::dispatch(DispatchKey::CompositeExplicitAutograd, TORCH_FN((exchange_kernel<NS, Exchange::forward>))));
  lib.impl("halo_forward_static",
           torch::dispatch(DispatchKey::Autograd, TORCH_FN((exchange_autograd<NS, Exchange::forward>))));
  lib.impl("halo_scatter_correct_static",
           torch::dispatch(DispatchKey::CompositeExplicitAutograd,
                           TORCH_FN((exchange_kernel<NS, Exchange::scatter_correct>))));
  lib.impl("halo_scatter_correct_static",
           torch::dispatch(DispatchKey::Autograd, TORCH_FN((exchange_autograd<NS, Exchange::scatter_correct>))));
  lib.impl("halo_forward_static_backward",
           torch::dispatch(DispatchKey::CompositeExplicitAutograd,
                           TORCH_FN((exchange_kernel<NS, Exchange::forward_adjoint>))));
  lib.impl("halo_forward_static_backward",
           torch::dispatch(DispatchKey::Autograd, TORCH_FN((exchange_autograd<NS, Exchange::forward_adjoint>))));
  lib.impl("per_system_reduce",
           torch::dispatch(DispatchKey::CompositeExplicitAutograd, TORCH_FN(per_system_reduce_kernel<NS>)));
  lib.impl("per_system_reduce", torch::dispatch(DispatchKey::Autograd, TORCH_FN(per_system_reduce_autograd<NS>)));
  lib.impl("per_system_reduce_backward",
           torch::dispatch(DispatchKey::CompositeExplicitAutograd, TORCH_FN(per_system_reduce_adjoint<NS>)));
  lib.impl("per_system_reduce_backward",
           torch::dispatch(DispatchKey::Autograd, TORCH_FN(per_system_reduce_backward_autograd<NS>)));
  lib.impl("halo_keepalive", torch::dispatch(DispatchKey::CompositeExplicitAutograd, TORCH_FN(keepalive_kernel<NS>)));
  lib.impl("halo_keepalive", torch::dispatch(DispatchKey::Autograd, TORCH_FN(keepalive_autograd<NS>)));
}

}  // namespace

void replay_without_rows(Dispatcher& dispatch, const std::vector<HaloCall>& calls) {
  const std::size_t n_rows = dispatch.halo().n_rows();
  std::vector<double> values;
  std::vector<float> values32;
  for (const HaloCall& call : calls) {
    const std::size_t n = call.kind == Exchange::all_reduce ? call.width : n_rows * call.width;
    values.assign(n, 0.0);
    values32.assign(call.fp32 ? n : 0, 0.0f);
    auto run = [&](auto rows) {
      switch (call.kind) {
        case Exchange::forward: exchange<Exchange::forward>(dispatch, rows); break;
        case Exchange::scatter_correct: exchange<Exchange::scatter_correct>(dispatch, rows); break;
        case Exchange::forward_adjoint: exchange<Exchange::forward_adjoint>(dispatch, rows); break;
        case Exchange::all_reduce: dispatch.all_reduce_sum(values.data(), n); break;
      }
    };
    if (call.fp32 && call.kind != Exchange::all_reduce) run(Rows<float>{values32.data(), n_rows, call.width});
    else run(Rows<double>{values.data(), n_rows, call.width});
  }
}

void register_halo_ops() {
  // What TORCH_LIBRARY does, at a moment of our choosing: a static registrar in a static
  // archive would be dropped by the linker. FRAGMENT rather than DEF: a process that also
  // imported nvalchemi's Python ops would get torch's duplicate-schema error naming the op,
  // not a claim on the whole namespace.
  static std::once_flag once;
  static std::vector<std::unique_ptr<torch::Library>> libraries;
  std::call_once(once, [] {
    libraries.push_back(std::make_unique<torch::Library>(torch::Library::FRAGMENT, kNamespaces[0], std::nullopt,
                                                         __FILE__, __LINE__));
    define_ops<0>(*libraries.back());
    libraries.push_back(std::make_unique<torch::Library>(torch::Library::FRAGMENT, kNamespaces[1], std::nullopt,
                                                         __FILE__, __LINE__));
    define_ops<1>(*libraries.back());
  });
}

const std::vector<std::string>& halo_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (int ns = 0; ns < 2; ++ns)
      for (const char* op : {"halo_forward_static", "halo_forward_static_backward", "halo_keepalive",
                             "halo_scatter_correct_static", "per_system_reduce",
                             "per_system_reduce_backward"})
        out.push_back(qualname(ns, op));
    std::sort(out.begin(), out.end());
    return out;
  }();
  return names;
}

}  // namespace distspec::models::torch_kind
