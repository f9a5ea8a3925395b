#include "distspec/ops/op_registry.h"

#include <algorithm>
#include <cstring>

#include "distspec/error.h"

namespace distspec {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f64: return "float64";
    case DType::f32: return "float32";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
  }
  return "?";
}

const char* device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

// The type from __PRETTY_FUNCTION__: "... [with T = ns::Type]" (GCC) or "... [T = ns::Type]" (Clang).
std::string StateType::name() const {
  const std::string signature = signature_();
  const std::size_t at = signature.rfind("T = ");
  if (at == std::string::npos) return signature;
  const std::size_t begin = at + 4;
  const std::size_t end = signature.find_first_of(";]", begin);
  return signature.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

bool StateType::operator==(const StateType& other) const {
  return signature_ == other.signature_ || std::strcmp(signature_(), other.signature_()) == 0;
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add_erased(const std::string& qualname, Device device, RegisteredKernel kernel) {
  if (qualname.find("::") == std::string::npos)
    throw Error("op.name", "", "op qualname '" + qualname + "' has no namespace", "register ops as 'ns::name'");
  kernels_.insert_or_assign({qualname, device}, std::move(kernel));
}

const RegisteredKernel* OpRegistry::find(const std::string& qualname, Device device) const {
  auto it = kernels_.find({qualname, device});
  return it == kernels_.end() ? nullptr : &it->second;
}

const RegisteredKernel& OpRegistry::kernel_for(const std::string& qualname, Device device, StateType state) const {
  const RegisteredKernel* kernel = find(qualname, device);
  if (!kernel)
    throw Error("op.missing", "", "no loaded kernel provides op '" + qualname + "' on " + device_name(device), "");
  if (kernel->state != state)
    throw Error("op.state", "",
                "op '" + qualname + "' on " + device_name(device) + " is called with state " + state.name() +
                    ", but its loaded kernel takes " + kernel->state.name(),
                "the model and the kernel library declare the op differently: rebuild them from the same op handle");
  return *kernel;
}

bool OpRegistry::contains(const std::string& qualname) const {
  return find(qualname, Device::cpu) || find(qualname, Device::cuda);
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [key, kernel] : kernels_)
    if (out.empty() || out.back() != key.first) out.push_back(key.first);
  return out;
}

}  // namespace distspec
