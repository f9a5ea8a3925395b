// The op registry: kernels registered by qualname ("ns::name") and device, each with the state
// type its handle (distspec/ops/op.h) declares for that device. It is the one piece of global
// mutable state in the core: model libraries fill it through explicit registration functions
// (static registrars would be dropped by the linker from static archives), and the dispatcher
// resolves a spec's op adapters against it, refusing a kernel whose state is not the one the
// model passes.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distspec/ops/op.h"
#include "distspec/ops/tensor_ref.h"
#include "distspec/util/span.h"

namespace distspec {

// A registered kernel with its state erased: the registry's wrapper restores the type, which
// `state` says, so that no kernel casts.
struct RegisteredKernel {
  std::function<void(Span<const TensorRef> args, Span<const TensorRef> outs, const void* state)> run;
  StateType state;
};

class OpRegistry {
 public:
  static OpRegistry& global();

  // Registers `kernel` for `op` on device D: kernel(args, outs, state), positional inputs,
  // positional outputs (preallocated by the caller) and the state the handle declares for D,
  // or this does not compile.
  template <Device D, class C, class G, class Kernel>
  void add(const Op<C, G>& op, Kernel kernel) {
    using State = typename Op<C, G>::template State<D>;
    static_assert(std::is_invocable_v<Kernel&, Span<const TensorRef>, Span<const TensorRef>, const State&>,
                  "the kernel does not take the state its op's handle declares for this device");
    std::function<void(Span<const TensorRef>, Span<const TensorRef>, const State&)> typed = std::move(kernel);
    add_erased(op.qualname, D,
               RegisteredKernel{[typed](Span<const TensorRef> args, Span<const TensorRef> outs, const void* state) {
                                  typed(args, outs, *static_cast<const State*>(state));
                                },
                                StateType::of<State>()});
  }

  // Runs op's kernel on D directly, without a spec's adapter (tests and tools); throws
  // distspec::Error when none is registered or its state differs from the handle's.
  template <Device D, class C, class G>
  void run(const Op<C, G>& op, Span<const TensorRef> args, Span<const TensorRef> outs,
           const typename Op<C, G>::template State<D>& state) const {
    kernel_for(op.qualname, D, StateType::of<typename Op<C, G>::template State<D>>()).run(args, outs, &state);
  }

  // nullptr when no kernel of that name exists for the device.
  const RegisteredKernel* find(const std::string& qualname, Device device) const;
  // The kernel of `qualname` on `device`, which must take `state`; throws distspec::Error (id
  // op.state) naming both types otherwise, and (id op.missing) when there is none.
  const RegisteredKernel& kernel_for(const std::string& qualname, Device device, StateType state) const;
  bool contains(const std::string& qualname) const;
  std::vector<std::string> names() const;  // sorted, every device

 private:
  void add_erased(const std::string& qualname, Device device, RegisteredKernel kernel);

  std::map<std::pair<std::string, Device>, RegisteredKernel> kernels_;
};

}  // namespace distspec
