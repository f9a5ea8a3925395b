#include "distspec/spec/mlip_spec.h"

#include <algorithm>
#include <array>

#include "distspec/spec/name_table.h"

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

std::string_view to_string(OutputKind k) { return name_table::name_of(kKindNames, k, "unknown"); }
std::optional<OutputKind> output_kind_from_string(std::string_view name) {
  return name_table::value_of(kKindNames, name);
}
std::string output_kind_list() { return name_table::list_of(kKindNames); }

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
         a.all_reduce_outputs == b.all_reduce_outputs && a.output_kinds == b.output_kinds &&
         a.compile == b.compile;
}

}  // namespace distspec
