#include "models/dftd3/dftd3_reference.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace distspec::models::dftd3 {

const ReferenceElement* find_element(const std::string& symbol) {
  for (const ReferenceElement& e : kElements)
    if (symbol == e.symbol) return &e;
  return nullptr;
}

std::string normalized_functional(const std::string& name) {
  std::string out;
  for (char c : name)
    if (c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::size_t k = 0; k < kAliasCount; ++k)
    if (out == kAliases[k].alias) return kAliases[k].name;
  return out;
}

std::optional<FunctionalParameters> find_functional(const std::string& name, Damping damping) {
  const std::string key = normalized_functional(name);
  for (std::size_t k = 0; k < kFunctionalCount; ++k)
    if (kFunctionals[k].damping == damping && key == kFunctionals[k].name) return kFunctionals[k];
  return std::nullopt;
}

const char* damping_name(Damping damping) {
  switch (damping) {
    case Damping::bj: return "bj";
    case Damping::zero: return "zero";
    case Damping::bjm: return "bjm";
    case Damping::zerom: return "zerom";
  }
  return "?";
}

}  // namespace distspec::models::dftd3
