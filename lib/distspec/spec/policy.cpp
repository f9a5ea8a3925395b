#include "distspec/spec/policy.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "distspec/error.h"

namespace distspec {
namespace {

struct Registry {
  std::mutex mutex;  // registration may race with a reader on another thread
  std::vector<PolicyKind> kinds{
      {"local", false, "", ""},
      {"shard", false, "", ""},
      {"graph_parallel", false, "", ""},
      {"halo", true, kHaloCorrection, kHaloRead},
      // refresh_halo aggregates owned-complete, so by default its scatter stays local.
      {"refresh_halo", true, "local", kHaloRead},
  };
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_policy_kind(PolicyKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = std::find_if(r.kinds.begin(), r.kinds.end(),
                         [&](const PolicyKind& k) { return k.name == kind.name; });
  if (it != r.kinds.end()) {
    *it = std::move(kind);
  } else {
    r.kinds.push_back(std::move(kind));
  }
}

void unregister_policy_kind(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.kinds.erase(std::remove_if(r.kinds.begin(), r.kinds.end(),
                               [&](const PolicyKind& k) { return k.name == name; }),
                r.kinds.end());
}

std::optional<PolicyKind> find_policy_kind(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const PolicyKind& k : r.kinds) {
    if (k.name == name) return k;
  }
  return std::nullopt;
}

std::vector<std::string> policy_kind_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const PolicyKind& k : r.kinds) names.push_back(k.name);
  return names;
}

std::string policy_kind_list() {
  std::string list;
  for (const std::string& name : policy_kind_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

StoragePolicy::StoragePolicy(std::string kind_name, std::optional<std::string> scatter,
                             std::optional<std::string> gather)
    : kind(std::move(kind_name)) {
  const std::optional<PolicyKind> info = find_policy_kind(kind);
  if (!info) {
    throw Error(error_id::value, "", "unknown policy " + quote(kind),
                "expected one of " + policy_kind_list());
  }
  if (!info->halo) {
    if (scatter || gather) {
      throw Error(error_id::value, "",
                  "policy " + quote(kind) + " takes no scatter_mode or gather_mode");
    }
    return;
  }
  scatter_mode = scatter ? std::move(*scatter) : info->default_scatter_mode;
  gather_mode = gather ? std::move(*gather) : info->default_gather_mode;
}

bool StoragePolicy::is_halo_kind() const {
  const std::optional<PolicyKind> info = find_policy_kind(kind);
  return info && info->halo;
}

bool operator==(const StoragePolicy& a, const StoragePolicy& b) {
  return a.kind == b.kind && a.scatter_mode == b.scatter_mode && a.gather_mode == b.gather_mode;
}

}  // namespace distspec
