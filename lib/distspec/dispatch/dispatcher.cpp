#include "distspec/dispatch/dispatcher.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "distspec/error.h"
#ifdef DISTSPEC_WITH_CUDA
#include "distspec/halo/device_staging.h"
#endif

namespace distspec {
namespace {

[[noreturn]] void fail(const std::string& pointer, const std::string& message, const std::string& hint) {
  throw Error("dispatch", pointer, message, hint);
}

// Wall seconds since `start`: steady_clock, since the core knows no MPI_Wtime.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string join(const std::vector<std::string>& names) {
  std::ostringstream s;
  for (std::size_t i = 0; i < names.size(); ++i) s << (i ? ", " : "") << names[i];
  return names.empty() ? std::string("(none)") : s.str();
}

// apply(transform, tensor) for each of an op's `transforms` (position -> transform), on the
// tensor at its position among `tensors` (its arguments or outputs: `what`).
template <class Transforms, class Apply>
void for_each_transform(const std::string& qualname, const Transforms& transforms, std::vector<TensorRef>& tensors,
                        const char* what, Apply apply) {
  for (const auto& [pos, t] : transforms) {
    if (pos >= static_cast<int>(tensors.size()))
      fail("", "op '" + qualname + "' has no " + what + " " + std::to_string(pos) + " to transform", "");
    apply(t, tensors[pos]);
  }
}

}  // namespace

// Rejects what a LAMMPS-style spatial decomposition cannot run.
void Dispatcher::check_policy(const StoragePolicy& policy, int n_ranks) {
  const std::string& kind = policy.kind;
  if (kind == "shard" || kind == "graph_parallel")
    fail("/core/policy/kind", "policy '" + kind + "' partitions rows across ranks without a halo; spatial domain decomposition cannot run it",
         "use the model's spec with policy 'halo' (or 'refresh_halo'): in nvalchemi, the distribution_spec the model "
         "declares with HaloStoragePolicy, as the SPEC_*_HALO presets do, saved with MLIPSpec.save()");
  if (kind == "local" && n_ranks > 1)
    fail("/core/policy/kind", "policy 'local' runs on a single process, but this run has " + std::to_string(n_ranks) + " MPI ranks",
         "run on 1 rank or use a spec with policy 'halo'");
}

Dispatcher::Dispatcher(DistributionSpec spec, Device device, const std::vector<OpUse>& model_ops, int n_ranks,
                       HaloStrategy strategy, const OpRegistry& registry)
    : spec_(std::move(spec)), device_(device) {
  check_policy(spec_.policy, n_ranks);
  const bool exchanges = strategy == HaloStrategy::per_layer;
  gather_refreshes_ = exchanges && spec_.policy.is_halo_kind() && spec_.policy.halo_gather();
  scatter_corrects_ = exchanges && spec_.policy.is_halo_kind() && spec_.policy.halo_scatter();

  for (std::size_t i = 0; i < spec_.custom_ops.size(); ++i) {
    const OpAdapter& adapter = spec_.custom_ops[i];
    const std::string at = "/core/custom_ops/" + std::to_string(i);
    for (const auto& [pos, t] : adapter.arg_transforms)
      if (t == ArgTransform::gather_inputs_full)
        fail(at + "/arg_transforms/" + std::to_string(pos) + "/type",
             "arg transform 'gather_inputs_full' belongs to sharded storage and is unsupported under spatial decomposition",
             "use 'gather_inputs' (halo rows) or 'slice_owned'");
    for (const auto& [pos, t] : adapter.output_transforms)
      if (t == OutputTransform::slice_outputs_owned)
        fail(at + "/output_transforms/" + std::to_string(pos) + "/type",
             "output transform 'slice_outputs_owned' belongs to sharded storage and is unsupported under spatial decomposition",
             "use 'scatter_outputs' or 'all_reduce_sum'");
    // Only ops the model calls run; the others' adapters are checked above and left unbound.
    const auto use = std::find(model_ops.begin(), model_ops.end(), adapter.op);
    if (use == model_ops.end()) continue;
    const RegisteredKernel* kernel = bind_kernel(*use, registry, at + "/op");
    if (!kernel)
      fail(at + "/op", "no loaded kernel provides op '" + adapter.op + "' on " + device_name(device_),
           "registered ops: " + join(registry.names()));
    ops_[adapter.op] = BoundOp{&adapter, kernel};
  }
  // Ops the model calls but the spec does not adapt run as pass-through.
  for (const OpUse& use : model_ops) {
    if (ops_.count(use.qualname)) continue;
    const RegisteredKernel* kernel = bind_kernel(use, registry, "");
    if (!kernel)
      fail("", "the model needs op '" + use.qualname + "', which no loaded kernel provides on " + device_name(device_),
           "registered ops: " + join(registry.names()));
    ops_[use.qualname] = BoundOp{nullptr, kernel};
  }
  reset_op_timing();
}

// The kernel of `use` on this device, or nullptr; throws when it takes another state than the
// model passes, which only a kernel library built from another declaration of the op can do.
const RegisteredKernel* Dispatcher::bind_kernel(const OpUse& use, const OpRegistry& registry,
                                                const std::string& pointer) const {
  const RegisteredKernel* kernel = registry.find(use.qualname, device_);
  if (kernel && kernel->state != use.state_on(device_))
    fail(pointer, "op '" + use.qualname + "' on " + device_name(device_) + ": the model calls it with state " +
                      use.state_on(device_).name() + ", but its loaded kernel takes " + kernel->state.name(),
         "the model and the kernel library declare the op differently: build both from the op's handle in the "
         "model's header");
  return kernel;
}

void Dispatcher::wrong_device_state(const std::string& qualname) const {
  const Device other = device_ == Device::cpu ? Device::cuda : Device::cpu;
  fail("", "op '" + qualname + "' was called with its " + device_name(other) + " state; this dispatcher runs it on " +
               device_name(device_),
       "a model calls its ops with the state of the device it was made for");
}

void Dispatcher::reset_op_timing() {
  op_timing_.clear();
  for (const auto& bound_op : ops_) op_timing_[bound_op.first] = {};
}

void Dispatcher::attach(HaloExchange& halo) {
  halo_ = &halo;
  if (device_ != Device::cuda || halo.accepts_device_rows()) return;
#ifdef DISTSPEC_WITH_CUDA
  if (!staging_) staging_ = std::make_unique<DeviceStagingHaloExchange>();
  static_cast<DeviceStagingHaloExchange&>(*staging_).wrap(halo);
  halo_ = staging_.get();
#endif
}

HaloExchange& Dispatcher::halo() const {
  if (!halo_) fail("", "no halo exchange attached to the dispatcher", "call attach() before computing");
  return *halo_;
}

template <class T>
void Dispatcher::forward(Rows<T> rows) {
  timed_exchange(rows, /*reverse=*/false);
}

template <class T>
void Dispatcher::reverse(Rows<T> rows) {
  timed_exchange(rows, /*reverse=*/true);
}

template <class T>
void Dispatcher::timed_exchange(Rows<T> rows, bool reverse) {
  HaloExchange& h = halo();
  h.wait_for_device();
  const auto start = std::chrono::steady_clock::now();
  if (reverse) {
    h.reverse(rows);
  } else {
    h.forward(rows);
  }
  stats_.seconds += seconds_since(start);
  ++(reverse ? stats_.reverse : stats_.forward);
  stats_.bytes += h.n_halo() * rows.width * sizeof(T);
}

template <class T>
void Dispatcher::before_gather(Rows<T> rows, RowKind kind) {
  if (gather_refreshes_ && kind == RowKind::features) forward(rows);
}

template <class T>
void Dispatcher::before_gather_adjoint(Rows<T> grad, RowKind kind) {
  if (gather_refreshes_ && kind == RowKind::features) reverse(grad);
}

template <class T>
void Dispatcher::after_scatter(Rows<T> acc) {
  if (!scatter_corrects_) return;
  reverse(acc);
  forward(acc);
}

void Dispatcher::all_reduce_sum(double* values, std::size_t n) {
  HaloExchange& h = halo();
  h.wait_for_device();
  const auto start = std::chrono::steady_clock::now();
  h.all_reduce_sum(values, n);
  stats_.seconds += seconds_since(start);
  ++stats_.all_reduce;
}

// Runs the exchanges `which` names over a tensor that must span every row.
void Dispatcher::exchange_tensor(const TensorRef& t, TensorExchange which, const char* what) {
  if (t.rows != halo().n_rows())
    fail("", std::string(what) + " needs a tensor of n_owned + n_halo = " + std::to_string(halo().n_rows()) +
                 " rows, got " + std::to_string(t.rows),
         "allocate per-node buffers over owned and halo rows");
  auto run = [&](auto* data) {
    using T = std::remove_pointer_t<decltype(data)>;
    Rows<T> rows{data, t.rows, static_cast<int>(t.cols)};
    if (which != TensorExchange::forward) reverse(rows);
    if (which != TensorExchange::reverse) forward(rows);
  };
  if (t.dtype == DType::f64) run(static_cast<double*>(t.data));
  else if (t.dtype == DType::f32) run(static_cast<float*>(t.data));
  else fail("", std::string(what) + " applies to float32/float64 tensors, got " + dtype_name(t.dtype), "");
}

const Dispatcher::BoundOp& Dispatcher::bound(const std::string& qualname) const {
  auto it = ops_.find(qualname);
  if (it == ops_.end())
    fail("", "op '" + qualname + "' was not bound when the model was set up", "list it in the model's ops");
  return it->second;
}

void Dispatcher::all_reduce_output(const std::string& qualname, const TensorRef& out) {
  if (out.dtype != DType::f64) fail("", "all_reduce_sum output of '" + qualname + "' must be float64", "");
  all_reduce_sum(static_cast<double*>(out.data), out.size());
}

void Dispatcher::adjoint_outputs(const std::string& qualname, std::vector<TensorRef> grad_outs) {
  const BoundOp& op = bound(qualname);
  if (!op.adapter) return;
  for_each_transform(qualname, op.adapter->output_transforms, grad_outs, "output", [&](const auto& t, TensorRef& grad) {
    if (t == OutputTransform::scatter_outputs) exchange_tensor(grad, TensorExchange::reverse_then_forward, "scatter_outputs");
    if (t == OutputTransform::all_reduce_sum && !t.replicated_consumer) all_reduce_output(qualname, grad);
  });
}

void Dispatcher::adjoint_args(const std::string& qualname, std::vector<TensorRef> grad_args) {
  const BoundOp& op = bound(qualname);
  if (!op.adapter) return;
  for_each_transform(qualname, op.adapter->arg_transforms, grad_args, "argument", [&](const auto& t, TensorRef& grad) {
    if (t == ArgTransform::gather_inputs) exchange_tensor(grad, TensorExchange::reverse, "gather_inputs");
  });
}

void Dispatcher::call_bound(const std::string& qualname, std::vector<TensorRef> args, std::vector<TensorRef> outs,
                            const void* state) {
  const BoundOp& bound = this->bound(qualname);
  const std::size_t n_owned = halo().n_owned();
  OpTiming& timing = op_timing_[qualname];
  ++timing.calls;

  auto start = std::chrono::steady_clock::now();
  if (bound.adapter) {
    for_each_transform(qualname, bound.adapter->arg_transforms, args, "argument", [&](const auto& t, TensorRef& arg) {
      if (t == ArgTransform::gather_inputs) exchange_tensor(arg, TensorExchange::forward, "gather_inputs");
      if (t == ArgTransform::slice_owned) arg.rows = std::min(arg.rows, n_owned);
    });
    timing.adapter_seconds += seconds_since(start);
    start = std::chrono::steady_clock::now();
  }
  bound.kernel->run(Span<const TensorRef>(args.data(), args.size()), Span<const TensorRef>(outs.data(), outs.size()),
                    state);
  timing.kernel_seconds += seconds_since(start);
  if (!bound.adapter) return;
  start = std::chrono::steady_clock::now();
  for_each_transform(qualname, bound.adapter->output_transforms, outs, "output", [&](const auto& t, TensorRef& out) {
    if (t == OutputTransform::scatter_outputs) exchange_tensor(out, TensorExchange::reverse_then_forward, "scatter_outputs");
    if (t == OutputTransform::all_reduce_sum) all_reduce_output(qualname, out);
  });
  timing.adapter_seconds += seconds_since(start);
}

#define DISTSPEC_INSTANTIATE(T)                                         \
  template void Dispatcher::before_gather<T>(Rows<T>, RowKind);         \
  template void Dispatcher::before_gather_adjoint<T>(Rows<T>, RowKind); \
  template void Dispatcher::after_scatter<T>(Rows<T>);
DISTSPEC_INSTANTIATE(double)
DISTSPEC_INSTANTIATE(float)
#undef DISTSPEC_INSTANTIATE

}  // namespace distspec
