#include "distspec/ops/op_registry.h"

#include <algorithm>

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

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(const std::string& qualname, Device device, OpKernel kernel) {
  if (qualname.find("::") == std::string::npos)
    throw Error("op.name", "", "op qualname '" + qualname + "' has no namespace", "register ops as 'ns::name'");
  kernels_[{qualname, device}] = std::move(kernel);
}

const OpKernel* OpRegistry::find(const std::string& qualname, Device device) const {
  auto it = kernels_.find({qualname, device});
  return it == kernels_.end() ? nullptr : &it->second;
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
