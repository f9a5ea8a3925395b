// The dispatcher: the spec's storage policy and op adapters made executable over a HaloExchange.
//
// Models call the policy-aware primitives around their own gathers and scatters, and call
// spec-adapted ops through `call`; they never talk to the halo exchange directly. Which exchange
// (if any) happens is decided here, from the spec, in the order DESIGN.md gives:
//   gather (gather_mode == halo_read)          : forward before reading halo rows
//   scatter-add (scatter_mode == halo_correction): reverse, then forward, after the local scatter
//   op adapter: gather_inputs -> slice_owned -> kernel -> scatter_outputs -> all_reduce_sum
// Adjoints run the other way: forward <-> reverse; reverse-then-forward is its own adjoint;
// all_reduce_sum's adjoint is another all-reduce, or the identity where the spec marks the
// output's consumer replicated (its gradient is already the global sum on every rank).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "distspec/halo/halo_exchange.h"
#include "distspec/ops/op.h"
#include "distspec/ops/op_registry.h"
#include "distspec/spec/distribution_spec.h"

namespace distspec {

// What a gathered block holds: coordinates are never refreshed by a feature exchange (the host
// code keeps halo coordinates current itself), nor are rows computed identically on halo rows
// from promoted inputs (an embedding of promoted species, say).
enum class RowKind : std::uint8_t { features, coordinates, replicated };

// How halo rows get their values. per_layer: a one-cutoff shell, refreshed by exchanges as the
// policy says. expanded: a shell deep enough that the host computes every layer on halo rows
// too, so no feature exchange happens at all.
enum class HaloStrategy : std::uint8_t { per_layer, expanded };

struct ExchangeStats {
  std::uint64_t forward = 0;
  std::uint64_t reverse = 0;
  std::uint64_t all_reduce = 0;
  std::uint64_t bytes = 0;  // halo rows moved, summed over exchanges, as payload bytes
  double seconds = 0.0;     // wall time inside the exchanges (a host's timing report splits it off)
};

// Where one op's time went, summed over its calls (host wall clock): its kernel, and the
// adapter's transforms around it (halo exchanges and all-reduces of its arguments and outputs).
// A cuda kernel returns at launch: its work shows in whatever waits for it next (an all-reduce
// of its output, a download), and cuda_runtime.h's per-kernel profile measures it on the device.
struct OpTiming {
  std::uint64_t calls = 0;
  double kernel_seconds = 0.0;
  double adapter_seconds = 0.0;
};

class Dispatcher {
 public:
  // Checks that the spec can run under a spatial decomposition over `n_ranks` ranks and binds
  // each op in `model_ops` (the ops the model calls) to a kernel for `device`, with the spec's
  // adapter where it has one, refusing a kernel whose state type is not the one the model's
  // handle declares for `device`. Adapters of ops the model never calls are checked but bound to
  // nothing: a spec may adapt a whole family of kernels (nvalchemi's Ewald spec adapts the
  // batched and slab variants too); whether such an adapter belongs to this model is a binding
  // rule of the host's. Throws distspec::Error whose pointer names the offending spec value.
  Dispatcher(DistributionSpec spec, Device device, const std::vector<OpUse>& model_ops, int n_ranks,
             HaloStrategy strategy = HaloStrategy::per_layer, const OpRegistry& registry = OpRegistry::global());

  // Throws distspec::Error (pointer /core/policy/kind) unless a spatial decomposition over
  // `n_ranks` ranks can run the policy; the constructor checks it first, hosts may check it
  // before any rule that would otherwise report a lesser problem of a spec that cannot run.
  static void check_policy(const StoragePolicy& policy, int n_ranks);

  // The halo exchange of the current step (its row counts change when the host reneighbours).
  // The kernels of a cuda dispatcher hand it device rows: an exchange that takes host rows only
  // is run through pinned host memory (DeviceStagingHaloExchange), chosen here, once per attach,
  // so that no model has to.
  void attach(HaloExchange& halo);
  HaloExchange& halo() const;

  const DistributionSpec& spec() const { return spec_; }
  Device device() const { return device_; }  // where the bound kernels run
  bool scatter_corrects() const { return scatter_corrects_; }

  // Before gathering node rows by sender index.
  template <class T> void before_gather(Rows<T> rows, RowKind kind = RowKind::features);
  // Adjoint of before_gather: halo-row gradients return to their owners.
  template <class T> void before_gather_adjoint(Rows<T> grad, RowKind kind = RowKind::features);
  // After a local scatter-add into an accumulator of n_owned + n_halo rows.
  template <class T> void after_scatter(Rows<T> acc);
  void all_reduce_sum(double* values, std::size_t n);

  // Calls `op` with the spec's adapter transforms applied around the kernel. `state` must be the
  // handle's state for a device (the compiler checks), and for this dispatcher's (checked here:
  // binding checked that the kernel takes it).
  template <class C, class G, class State>
  void call(const Op<C, G>& op, std::vector<TensorRef> args, std::vector<TensorRef> outs, const State& state) {
    static_assert(std::is_same_v<State, C> || std::is_same_v<State, G>,
                  "the state is neither of the states the op's handle declares");
    if (!(device_ == Device::cpu ? std::is_same_v<State, C> : std::is_same_v<State, G>)) wrong_device_state(op.qualname);
    call_bound(op.qualname, std::move(args), std::move(outs), &state);
  }

  // The adjoint of the adapter's transforms, for a host that differentiates through an adapted
  // op: on the gradients arriving at its outputs before the kernel's backward
  // (scatter_outputs: reverse then forward; all_reduce_sum: all-reduce, or nothing for a
  // replicated consumer), and on the gradients its backward leaves at its arguments after it
  // (gather_inputs: reverse, halo rows then zero; slice_owned: nothing, halo rows were never read).
  void adjoint_outputs(const std::string& qualname, std::vector<TensorRef> grad_outs);
  void adjoint_args(const std::string& qualname, std::vector<TensorRef> grad_args);

  const ExchangeStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  // Per bound op, by name: the same names on every rank of a run (those the model calls).
  const std::map<std::string, OpTiming>& op_timing() const { return op_timing_; }
  void reset_op_timing();

 private:
  struct BoundOp {
    const OpAdapter* adapter = nullptr;  // nullptr: pass-through
    const RegisteredKernel* kernel = nullptr;
  };
  template <class T> void forward(Rows<T> rows);
  template <class T> void reverse(Rows<T> rows);
  // Either one, after the device work on the rows, timed and counted in stats_.
  template <class T> void timed_exchange(Rows<T> rows, bool reverse);
  enum class TensorExchange : std::uint8_t { forward, reverse, reverse_then_forward };
  void exchange_tensor(const TensorRef& t, TensorExchange which, const char* what);
  const BoundOp& bound(const std::string& qualname) const;
  const RegisteredKernel* bind_kernel(const OpUse& use, const OpRegistry& registry, const std::string& pointer) const;
  void call_bound(const std::string& qualname, std::vector<TensorRef> args, std::vector<TensorRef> outs,
                  const void* state);
  [[noreturn]] void wrong_device_state(const std::string& qualname) const;
  void all_reduce_output(const std::string& qualname, const TensorRef& out);

  DistributionSpec spec_;
  Device device_;
  bool gather_refreshes_ = false;
  bool scatter_corrects_ = false;
  std::map<std::string, BoundOp> ops_;
  HaloExchange* halo_ = nullptr;
  std::unique_ptr<HaloExchange> staging_;  // a DeviceStagingHaloExchange around the host's, when needed
  ExchangeStats stats_;
  std::map<std::string, OpTiming> op_timing_;
};

}  // namespace distspec
