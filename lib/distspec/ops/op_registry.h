// The op registry: kernels registered by qualname ("ns::name") and device. It is the one piece of
// global mutable state in the core: model libraries fill it through explicit registration
// functions (static registrars would be dropped by the linker from static archives), and the
// dispatcher resolves a spec's op adapters against it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "distspec/ops/tensor_ref.h"
#include "distspec/util/span.h"

namespace distspec {

// A kernel: positional inputs, positional outputs (preallocated by the caller), and the opaque
// model state the kernel reads parameters from.
using OpKernel = std::function<void(Span<const TensorRef> args, Span<const TensorRef> outs, const void* state)>;

class OpRegistry {
 public:
  static OpRegistry& global();

  void add(const std::string& qualname, Device device, OpKernel kernel);
  // nullptr when no kernel of that name exists for the device.
  const OpKernel* find(const std::string& qualname, Device device) const;
  bool contains(const std::string& qualname) const;
  std::vector<std::string> names() const;  // sorted, every device

 private:
  std::map<std::pair<std::string, Device>, OpKernel> kernels_;
};

}  // namespace distspec
