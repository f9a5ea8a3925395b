#include "distspec/spec/distribution_spec.h"

namespace distspec {

const std::vector<std::string>& default_shard_fields() {
  static const std::vector<std::string> fields{"positions", "charges", "atomic_numbers"};
  return fields;
}

std::string shard_field_list() {
  std::string list;
  for (const std::string& f : default_shard_fields()) list += (list.empty() ? "" : ", ") + f;
  return list;
}

bool operator==(const DistributionSpec& a, const DistributionSpec& b) {
  return a.policy == b.policy && a.custom_ops == b.custom_ops &&
         a.third_party_helpers == b.third_party_helpers && a.shard_fields == b.shard_fields;
}

DistributionSpec with_adapters(DistributionSpec spec, const std::vector<Adapter>& adapters) {
  for (const Adapter& a : adapters) {
    if (const auto* op = std::get_if<OpAdapter>(&a)) {
      spec.custom_ops.push_back(*op);
    } else {
      spec.third_party_helpers.push_back(std::get<HelperRecord>(a));
    }
  }
  return spec;
}

}  // namespace distspec
