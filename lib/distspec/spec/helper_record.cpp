#include "distspec/spec/helper_record.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace distspec {
namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

// Name fragments of nvalchemi's replacements and of the callables they patch, with the native
// meaning of each ("_refresh" also covers neighbor_refresh_adapters). First match wins.
constexpr std::array<std::pair<std::string_view, NativeAction>, 12> kPatterns{{
    {"_refresh", NativeAction::refresh_neighbours},
    {"escn_block_forward", NativeAction::refresh_neighbours},
    {"conv_sv_forward", NativeAction::refresh_neighbours},
    {"coulomb_forward", NativeAction::refresh_neighbours},
    {"product_block", NativeAction::refresh_neighbours},
    {"_fold", NativeAction::fold_to_owners},
    {"edgewise", NativeAction::fold_to_owners},
    {"edge_degree", NativeAction::fold_to_owners},
    {"mol_sum", NativeAction::owned_system_sum},
    {"reduce_node_to_system", NativeAction::owned_system_sum},
    {"composition_info", NativeAction::owned_system_sum},
    {"undo_refs", NativeAction::owned_system_sum},
}};

NativeAction match(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [fragment, action] : kPatterns) {
    if (name.find(fragment) != std::string::npos) return action;
  }
  return NativeAction::unknown;
}

}  // namespace

bool operator==(const JitHelper& a, const JitHelper& b) {
  return a.module_path == b.module_path && a.attr_name == b.attr_name &&
         a.replacement == b.replacement && a.mode == b.mode;
}
bool operator==(const PythonHelper& a, const PythonHelper& b) {
  return a.module_path == b.module_path && a.attr_name == b.attr_name &&
         a.replacement == b.replacement;
}
bool operator==(const MethodHelper& a, const MethodHelper& b) {
  return a.module_path == b.module_path && a.class_name == b.class_name &&
         a.method_name == b.method_name && a.replacement == b.replacement && a.mode == b.mode;
}
bool operator==(const ModuleForwardHelper& a, const ModuleForwardHelper& b) {
  return a.target == b.target && a.label == b.label;
}

std::string_view helper_kind(const HelperRecord& h) {
  return std::visit(
      Overloaded{[](const JitHelper&) { return std::string_view("jit"); },
                 [](const PythonHelper&) { return std::string_view("python"); },
                 [](const MethodHelper&) { return std::string_view("method"); },
                 [](const ModuleForwardHelper&) { return std::string_view("module_forward"); }},
      h);
}

std::string helper_kind_list() { return "jit, python, method, module_forward"; }

std::string helper_target(const HelperRecord& h) {
  return std::visit(
      Overloaded{[](const JitHelper& j) { return j.module_path + "." + j.attr_name; },
                 [](const PythonHelper& p) { return p.module_path + "." + p.attr_name; },
                 [](const MethodHelper& m) {
                   return m.module_path + "." + m.class_name + "." + m.method_name;
                 },
                 [](const ModuleForwardHelper& f) { return f.target; }},
      h);
}

NativeAction native_action(const HelperRecord& h) {
  if (std::holds_alternative<JitHelper>(h)) return NativeAction::nothing;
  if (const auto* m = std::get_if<MethodHelper>(&h); m && m->mode == "marshal") {
    return NativeAction::nothing;
  }
  // A module_forward record swaps a fused message-passing forward for gather + scatter around
  // the kernel: natively that is the per-layer halo refresh.
  if (std::holds_alternative<ModuleForwardHelper>(h)) return NativeAction::refresh_neighbours;
  // The replacement names the distributed behaviour best; the patched callable is the fallback.
  const Replacement& replacement = std::holds_alternative<MethodHelper>(h)
                                       ? std::get<MethodHelper>(h).replacement
                                       : std::get<PythonHelper>(h).replacement;
  if (replacement) {
    if (NativeAction a = match(*replacement); a != NativeAction::unknown) return a;
  }
  return match(helper_target(h));
}

std::string_view to_string(NativeAction a) {
  switch (a) {
    case NativeAction::nothing: return "nothing to do natively (marshal)";
    case NativeAction::refresh_neighbours: return "refresh neighbours (per-layer halo refresh)";
    case NativeAction::fold_to_owners:
      return "fold halo contributions to owners (reverse exchange)";
    case NativeAction::owned_system_sum: return "owned-only system sum + all-reduce";
    case NativeAction::unknown: break;
  }
  return "not applicable natively";
}

std::optional<std::string> native_meaning(const HelperRecord& h) {
  const NativeAction a = native_action(h);
  if (a == NativeAction::unknown) return std::nullopt;
  return std::string(to_string(a));
}

}  // namespace distspec
