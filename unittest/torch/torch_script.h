// TorchScript written in the tests: C++'s own resolver knows `torch` only as ATen, so names of
// the ops' namespaces (`nvalchemi.halo_forward_static(...)`) resolve here, as torch.ops.* does
// in Python.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>

namespace distspec::test {

struct OpNamespaceResolver : torch::jit::Resolver {
  explicit OpNamespaceResolver(std::vector<std::string> namespaces) : namespaces(std::move(namespaces)) {}

  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction& m,
                                                         const torch::jit::SourceRange& loc) override {
    if (std::find(namespaces.begin(), namespaces.end(), name) != namespaces.end())
      return std::make_shared<torch::jit::BuiltinModule>(name);
    return torch::jit::nativeResolver()->resolveValue(name, m, loc);
  }
  c10::TypePtr resolveType(const std::string& name, const torch::jit::SourceRange& loc) override {
    return torch::jit::nativeResolver()->resolveType(name, loc);
  }

  std::vector<std::string> namespaces;
};

inline std::shared_ptr<torch::jit::Resolver> op_namespace_resolver(std::vector<std::string> namespaces = {"nvalchemi",
                                                                                                          "distspec"}) {
  return std::make_shared<OpNamespaceResolver>(std::move(namespaces));
}

}  // namespace distspec::test
