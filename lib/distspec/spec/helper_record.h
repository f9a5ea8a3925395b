// Third-party helper records: Python callables a model's distributed run patches. They name
// Python code, so the native runtime cannot run them; it reads them for their meaning
// (native_action) and keeps every field verbatim so a spec round-trips byte for byte.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace distspec {

// "module:qualname" of the replacement, or null; kept verbatim, never resolved.
using Replacement = std::optional<std::string>;

struct JitHelper {  // kind "jit": a @torch.jit.script module attribute
  std::string module_path;
  std::string attr_name;
  Replacement replacement;
  std::string mode = "eager";  // nvalchemi's default; "marshal" runs the original unwrapped
};

struct PythonHelper {  // kind "python": a module-level function
  std::string module_path;
  std::string attr_name;
  Replacement replacement;
};

struct MethodHelper {  // kind "method": a class method, wrapped
  std::string module_path;
  std::string class_name;
  std::string method_name;
  Replacement replacement;
  std::string mode = "wrap";  // nvalchemi's default; "marshal" as for jit
};

struct ModuleForwardHelper {  // kind "module_forward": one module instance's forward
  std::string target;
  std::string label = "module_forward";
};

using HelperRecord = std::variant<JitHelper, PythonHelper, MethodHelper, ModuleForwardHelper>;

bool operator==(const JitHelper& a, const JitHelper& b);
bool operator==(const PythonHelper& a, const PythonHelper& b);
bool operator==(const MethodHelper& a, const MethodHelper& b);
bool operator==(const ModuleForwardHelper& a, const ModuleForwardHelper& b);

std::string_view helper_kind(const HelperRecord& h);  // "jit", "python", "method", "module_forward"
std::string helper_kind_list();                       // "jit, python, method, module_forward"
// Dotted name of the patched callable ("mod.Class.method", "mod.attr") or the target.
std::string helper_target(const HelperRecord& h);

// What the native runtime does in place of a helper.
enum class NativeAction {
  nothing,             // jit / mode "marshal": unwrap-run-rewrap, nothing to do natively
  refresh_neighbours,  // per-layer halo refresh (forward exchange)
  fold_to_owners,      // halo contributions summed into owners (reverse exchange)
  owned_system_sum,    // sum over owned rows only, then all-reduce
  unknown,             // not recognised: report it (an error in strict mode)
};

// Recognises a helper by kind, mode and the names in its replacement and target (the patterns
// nvalchemi's own replacements follow, e.g. "_distributed_edgewise_fold").
NativeAction native_action(const HelperRecord& h);
std::string_view to_string(NativeAction a);  // short text, e.g. "nothing to do natively (marshal)"
// to_string(native_action(h)), or nullopt when the helper is not recognised.
std::optional<std::string> native_meaning(const HelperRecord& h);

}  // namespace distspec
