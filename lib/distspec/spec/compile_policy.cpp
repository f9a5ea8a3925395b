#include "distspec/spec/compile_policy.h"

#include <array>
#include <utility>

#include "distspec/spec/name_table.h"

namespace distspec {
namespace {

// nvalchemi's ForceStrategy members, in its order.
constexpr std::array<std::pair<ForceStrategy, std::string_view>, 3> kNames{{
    {ForceStrategy::model_internal, "model_internal"},
    {ForceStrategy::framework_from_node_energy, "framework_from_node_energy"},
    {ForceStrategy::framework_from_global_energy, "framework_from_global_energy"},
}};

}  // namespace

std::string_view to_string(ForceStrategy s) { return name_table::name_of(kNames, s); }
std::optional<ForceStrategy> force_strategy_from_string(std::string_view name) {
  return name_table::value_of(kNames, name);
}
std::string force_strategy_list() { return name_table::list_of(kNames); }

}  // namespace distspec
