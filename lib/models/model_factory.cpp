#include "models/model_factory.h"

#include "distspec/error.h"
#include "models/eam/eam.h"
#include "models/lj/lj.h"
#include "models/mpnn/mpnn.h"

namespace distspec::models {
namespace {

struct Architecture {
  std::string name;
  std::unique_ptr<Model> (*make)(const ModelFile&);
  void (*register_ops)(OpRegistry&);  // nullptr: the model registers no kernels
};

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> list{
      {"lj", lj::make_model, lj::register_ops},
      {"eam", eam::make_model, eam::register_ops},
      {"mpnn", mpnn::make_model, nullptr},  // runs on the tape (lib/distspec/tensor)
  };
  return list;
}

}  // namespace

const std::vector<std::string>& architecture_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Architecture& a : architectures()) out.push_back(a.name);
    return out;
  }();
  return names;
}

std::unique_ptr<Model> make_model(const ModelFile& file) {
  for (const Architecture& a : architectures())
    if (a.name == file.architecture) return a.make(file);
  // parse_model_file only lets known architectures through; a ModelFile built in code may not.
  throw Error(model_error_id::value, "/architecture", "unknown architecture '" + file.architecture + "'",
              "expected one of " + join_names(architecture_names()), file.path);
}

void register_builtin_ops(OpRegistry& registry) {
  // OpRegistry::add replaces a kernel of the same name and device, so repeating is harmless.
  for (const Architecture& a : architectures())
    if (a.register_ops) a.register_ops(registry);
}

}  // namespace distspec::models
