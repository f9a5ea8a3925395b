#include "models/torch/accelerators.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include <ATen/core/dispatch/Dispatcher.h>

#include "distspec/error.h"
#include "models/model_error.h"

#ifndef DISTSPEC_OPENEQUIVARIANCE_LIBRARY
#define DISTSPEC_OPENEQUIVARIANCE_LIBRARY ""
#endif
#ifndef DISTSPEC_MACE_OPS_LIBRARY
#define DISTSPEC_MACE_OPS_LIBRARY ""
#endif

namespace distspec::models::torch_kind {
namespace {

constexpr Accelerator kAccelerators[] = {
    {"openequivariance", "OpenEquivariance", "libtorch_tp_jit", "DISTSPEC_OPENEQUIVARIANCE_LIBRARY",
     DISTSPEC_OPENEQUIVARIANCE_LIBRARY, "",
     "build its library against this plugin's torch (scripts/build_openequivariance.sh PYTHON DIR), then set "
     "DISTSPEC_OPENEQUIVARIANCE_LIBRARY=DIR/lib/liboeq_stable_cuda_aoti.so or configure the plugin with "
     "-DDISTSPEC_OPENEQUIVARIANCE_LIBRARY=...; or export the model with --accelerate none"},
    {"cuequivariance", "cuEquivariance", "cuequivariance", "", "", "",
     "cuEquivariance defines its torch ops in Python only, and this plugin has no C++ registration of them: export "
     "the model with --accelerate oeq (SevenNet, MACE) or --accelerate none"},
    {"mace-kernels", "DISTSPEC's MACE kernels", "distspec_mace", "DISTSPEC_MACE_OPS_LIBRARY", DISTSPEC_MACE_OPS_LIBRARY,
     "libdistspec_mace_ops.so",
     "copy libdistspec_mace_ops.so from the plugin's build folder beside the plugin, or set "
     "DISTSPEC_MACE_OPS_LIBRARY to it (a build with LibTorch makes it); or export the model with --accelerate none"},
};

std::string namespace_of(const std::string& op) { return op.substr(0, op.find("::")); }

// The ops torch has registered whose names start with "ns::", in the registry's order.
std::vector<std::string> ops_in_namespace(const char* ns) {
  const std::string prefix = std::string(ns) + "::";
  std::vector<std::string> ops;
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames())
    if (name.name.compare(0, prefix.size(), prefix) == 0) ops.push_back(name.name);
  return ops;
}

bool torch_has_namespace(const char* ns) { return !ops_in_namespace(ns).empty(); }

// The folder of the shared object this code is in (the plugin), with a trailing '/'; "" unknown.
std::string plugin_folder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&plugin_folder), &info) || !info.dli_fname) return "";
  const std::string self = info.dli_fname;
  const auto slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash + 1);
}

// Where the accelerator's library is: the environment wins over a copy beside the plugin (a
// packed or installed plugin), which wins over the build's path.
std::string library_path(const Accelerator& a) {
  if (!*a.library_variable) return "";
  if (const char* env = std::getenv(a.library_variable); env && *env) return env;
  if (*a.beside_plugin) {
    const std::string folder = plugin_folder();
    const std::string candidate = folder + a.beside_plugin;
    if (!folder.empty() && access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return a.built_library;
}

}  // namespace

const Accelerator* accelerator_of_op(const std::string& op) {
  const std::string ns = namespace_of(op);
  for (const Accelerator& a : kAccelerators)
    if (ns == a.op_namespace) return &a;
  return nullptr;
}

const Accelerator* accelerator_named(const std::string& name) {
  for (const Accelerator& a : kAccelerators)
    if (name == a.name) return &a;
  return nullptr;
}

std::vector<std::string> accelerator_names() {
  std::vector<std::string> names;
  for (const Accelerator& a : kAccelerators) names.emplace_back(a.name);
  return names;
}

void require_accelerator(const Accelerator& a, const std::string& op, const std::string& graph,
                         const std::string& json_path) {
  // One attempt per accelerator and process; its outcome (an empty string: loaded) is kept, so
  // every model file that needs it hears the same answer.
  static std::mutex mutex;
  static std::map<std::string, std::string> outcome;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, first] = outcome.try_emplace(a.name);
  if (first && !torch_has_namespace(a.op_namespace)) {
    const std::string path = library_path(a);
    if (path.empty()) {
      it->second = *a.library_variable ? std::string("no ") + a.display + " library was given (" + a.library_variable +
                                             " is unset and the plugin was built without one)"
                                       : std::string("this plugin cannot provide ") + a.display + "'s ops";
    } else if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = dlerror();
      it->second = std::string("its library ") + path + " does not load: " + (why ? why : "unknown reason");
    } else if (!torch_has_namespace(a.op_namespace)) {
      it->second = std::string("its library ") + path + " loaded but registered no " + a.op_namespace + ":: op";
    }
  }
  if (!it->second.empty())
    throw Error(model_error_id::accelerator, json_path,
                "graph " + graph + " calls op '" + op + "' of " + a.display + ", which this plugin cannot run: " +
                    it->second,
                a.how_to_get);
}

std::vector<std::string> registered_ops(const Accelerator& a) {
  std::vector<std::string> ops = ops_in_namespace(a.op_namespace);
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

}  // namespace distspec::models::torch_kind
