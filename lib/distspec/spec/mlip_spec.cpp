#include "distspec/spec/mlip_spec.h"

#include <algorithm>
#include <array>

namespace distspec {
namespace {

constexpr std::array<std::pair<OutputKind, std::string_view>, 4> kKindNames{{
    {OutputKind::per_node, "per_node"},
    {OutputKind::per_graph, "per_graph"},
    {OutputKind::global, "global"},
    {OutputKind::unknown, "unknown"},
}};

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

std::string_view to_string(OutputKind k) {
  for (const auto& [kind, name] : kKindNames) {
    if (kind == k) return name;
  }
  return "unknown";
}

std::optional<OutputKind> output_kind_from_string(std::string_view name) {
  for (const auto& [kind, n] : kKindNames) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

std::string output_kind_list() {
  std::string list;
  for (const auto& entry : kKindNames)
    list += (list.empty() ? "" : ", ") + std::string(entry.second);
  return list;
}

std::optional<OutputKind> MLIPSpec::output_kind(std::string_view name) const {
  for (const auto& [n, kind] : output_kinds) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

bool MLIPSpec::is_owned_only(std::string_view name) const {
  return contains(owned_only_outputs, name);
}
bool MLIPSpec::is_all_reduce(std::string_view name) const {
  return contains(all_reduce_outputs, name);
}

bool operator==(const MLIPSpec& a, const MLIPSpec& b) {
  return a.core == b.core && a.system_reductions == b.system_reductions &&
         a.node_energy_key == b.node_energy_key && a.node_virial_key == b.node_virial_key &&
         a.gp_replicate_geometry == b.gp_replicate_geometry &&
         a.owned_only_outputs == b.owned_only_outputs &&
         a.all_reduce_outputs == b.all_reduce_outputs && a.output_kinds == b.output_kinds;
}

}  // namespace distspec
