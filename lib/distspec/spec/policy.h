// Storage policy of a DistributionSpec: how a rank's rows relate to the global rows, and for
// the halo kinds how scatters and gathers treat the halo rows ([owned | halo] layout).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace distspec {

// Mode strings that switch halo behaviour on; any other mode string behaves as local.
inline constexpr char kHaloCorrection[] = "halo_correction";  // scatter: local, reverse, forward
inline constexpr char kHaloRead[] = "halo_read";              // gather: forward before reading

// What the spec reader knows about one policy kind. Kinds are registered, not hard-coded, so a
// new nvalchemi policy can be read without touching the reader (nvalchemi does the same with
// register_policy_kind).
struct PolicyKind {
  std::string name;
  bool halo = false;  // rows are [owned | halo]; the record carries scatter_mode and gather_mode
  std::string default_scatter_mode;  // used on read when the record leaves a mode out
  std::string default_gather_mode;
};

// Adds a kind, or replaces the kind of the same name. Built in: local, shard, graph_parallel,
// halo (halo_correction / halo_read), refresh_halo (local / halo_read).
void register_policy_kind(PolicyKind kind);
// Removes a kind again (a plugin that registered kinds and is going away; tests).
void unregister_policy_kind(std::string_view name);
std::optional<PolicyKind> find_policy_kind(std::string_view name);
std::vector<std::string> policy_kind_names();  // in registration order
std::string policy_kind_list();                // "local, shard, graph_parallel, halo, refresh_halo"

struct StoragePolicy {
  std::string kind = "local";
  // Set exactly when the kind is a halo kind (nvalchemi writes non-halo kinds as {"kind": K}).
  std::optional<std::string> scatter_mode;
  std::optional<std::string> gather_mode;

  StoragePolicy() = default;  // local: single process
  // Checks the kind against the registry and fills the kind's default modes; throws Error
  // (spec.value) for an unknown kind or for modes given to a kind that has none.
  explicit StoragePolicy(std::string kind, std::optional<std::string> scatter_mode = std::nullopt,
                         std::optional<std::string> gather_mode = std::nullopt);

  bool is_halo_kind() const;
  bool halo_scatter() const { return scatter_mode == kHaloCorrection; }
  bool halo_gather() const { return gather_mode == kHaloRead; }
};

bool operator==(const StoragePolicy& a, const StoragePolicy& b);
inline bool operator!=(const StoragePolicy& a, const StoragePolicy& b) { return !(a == b); }

}  // namespace distspec
