// Typed op handles: an op is declared once, in its model's header, with the state its kernels
// take, and is registered (OpRegistry::add) and called (Dispatcher::call) through that handle, so
// that the compiler checks both sides against the declaration, the way TORCH_LIBRARY schemas type
// an op. The spec still binds by qualname: the handle's string is what a spec's op adapter names.
// Only what a spec can adapt is an op: a model whose spec lists no custom ops (the MPNN, and
// DFT-D3, whose nvalchemi spec has `custom_ops: []`) calls its kernels directly, through their
// own typed signatures, with no registry lookup and no state to check.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "distspec/ops/tensor_ref.h"

namespace distspec {

// The identity of a kernel's state type, recorded by the registry and compared when a spec binds.
// A CUDA kernel's state holds device arrays and is complete only in its .cu file, while its
// model's header, compiled by the host compiler, can merely declare it; typeid needs a complete
// type, so the identity is one function per type instead: its address is the identity, its
// result (the compiler's signature of itself) spells the type for error messages.
class StateType {
 public:
  template <class T>
  static StateType of() {
    return StateType(&signature<T>);
  }
  // "distspec::models::eam::DeviceTables"
  std::string name() const;
  // Addresses first; equal spellings as well, in case two shared objects each kept a copy.
  bool operator==(const StateType& other) const;
  bool operator!=(const StateType& other) const { return !(*this == other); }

 private:
  using Signature = const char* (*)();
  explicit StateType(Signature signature) : signature_(signature) {}
  template <class T>
  static const char* signature() {
    return __PRETTY_FUNCTION__;
  }
  Signature signature_;
};

// The state of an op that reads none (a placeholder whose kernel only reports where the op runs).
struct NoState {};

// An op with the state its kernel takes on each device. The two differ where a model keeps its
// constants on the device: a CPU kernel reads the model's constants and the call's threads
// through host pointers (EdgeOpState<Tables>), a CUDA kernel reads tables the model uploaded once
// (DeviceTables). One handle holds both, rather than two handles of one qualname, so that the
// qualname is spelled once and a model's call names one op whichever device it runs on.
template <class CpuState, class CudaState = CpuState>
struct Op {
  using Cpu = CpuState;
  using Cuda = CudaState;
  template <Device D>
  using State = std::conditional_t<D == Device::cpu, CpuState, CudaState>;

  const char* qualname;
};

// An op a model calls, as binding sees it: the qualname the spec names and the state the model
// passes on each device, which the dispatcher checks against the kernel the registry holds.
struct OpUse {
  template <class C, class G>
  OpUse(const Op<C, G>& op)  // NOLINT(google-explicit-constructor): a model lists its handles
      : qualname(op.qualname), cpu_state(StateType::of<C>()), cuda_state(StateType::of<G>()) {}

  StateType state_on(Device device) const { return device == Device::cpu ? cpu_state : cuda_state; }

  std::string qualname;
  StateType cpu_state;
  StateType cuda_state;
};

inline bool operator==(const OpUse& use, const std::string& qualname) { return use.qualname == qualname; }
inline bool operator==(const std::string& qualname, const OpUse& use) { return use.qualname == qualname; }

// The qualnames of `uses`, in their order.
inline std::vector<std::string> qualnames(const std::vector<OpUse>& uses) {
  std::vector<std::string> names;
  for (const OpUse& use : uses) names.push_back(use.qualname);
  return names;
}

}  // namespace distspec
