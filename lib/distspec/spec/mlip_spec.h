// MLIPSpec v2: a DistributionSpec plus how each named model output is put together across
// ranks. Mirrors nvalchemi's MLIPSpec.to_dict() field for field.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "distspec/spec/compile_policy.h"
#include "distspec/spec/distribution_spec.h"

namespace distspec {

enum class OutputKind { per_node, per_graph, global, unknown };

std::string_view to_string(OutputKind k);
std::optional<OutputKind> output_kind_from_string(std::string_view name);
std::string output_kind_list();  // "per_node, per_graph, global, unknown"

struct MLIPSpec {
  static constexpr int version = 2;  // the only version this reader and writer know

  DistributionSpec core;
  bool system_reductions = true;
  std::optional<std::string> node_energy_key;  // per-node energy the runtime sums, owned-only
  std::optional<std::string> node_virial_key;
  bool gp_replicate_geometry = false;
  // Sorted, without repeats, as read; the writer sorts whatever it is given.
  std::vector<std::string> owned_only_outputs;  // exact on owned rows already
  std::vector<std::string> all_reduce_outputs;  // per-rank partials, summed over ranks
  std::vector<std::pair<std::string, OutputKind>> output_kinds;  // sorted by name
  // nullopt: "compile": null, or no member: the model computes its own forces.
  std::optional<CompilePolicy> compile;
  // Spelling, not meaning: whether the file had a "compile" member (nvalchemi >= 0.2 always
  // writes one), so that an older file is written back in its own bytes.
  bool compile_written = true;

  std::optional<OutputKind> output_kind(std::string_view name) const;
  bool is_owned_only(std::string_view name) const;
  bool is_all_reduce(std::string_view name) const;
};

bool operator==(const MLIPSpec& a, const MLIPSpec& b);
inline bool operator!=(const MLIPSpec& a, const MLIPSpec& b) { return !(a == b); }

}  // namespace distspec
