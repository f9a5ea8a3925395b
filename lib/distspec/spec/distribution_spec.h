// DistributionSpec: the framework-generic part of a spec ("core" in the JSON).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "distspec/spec/helper_record.h"
#include "distspec/spec/op_adapter.h"
#include "distspec/spec/policy.h"

namespace distspec {

// The per-row inputs the runtime can hand a model as halo-aware rows. It is also the default
// when a spec leaves shard_fields out, and then the writer leaves it out too.
const std::vector<std::string>& default_shard_fields();  // positions, charges, atomic_numbers
std::string shard_field_list();                          // "positions, charges, atomic_numbers"

struct DistributionSpec {
  StoragePolicy policy;
  std::vector<OpAdapter> custom_ops;
  std::vector<HelperRecord> third_party_helpers;
  std::vector<std::string> shard_fields = default_shard_fields();  // {} = promote nothing
};

bool operator==(const DistributionSpec& a, const DistributionSpec& b);
inline bool operator!=(const DistributionSpec& a, const DistributionSpec& b) { return !(a == b); }

// One entry of the mixed adapter list nvalchemi models declare (`adapters=`).
using Adapter = std::variant<OpAdapter, HelperRecord>;

// Appends op adapters to custom_ops and helpers to third_party_helpers, each in list order,
// after what `spec` already holds (nvalchemi's DistributionSpec lowering).
DistributionSpec with_adapters(DistributionSpec spec, const std::vector<Adapter>& adapters);

}  // namespace distspec
