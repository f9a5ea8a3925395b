#include "models/factory/model_factory.h"

#include <algorithm>

#include "distspec/error.h"
#include "models/builtin_specs.h"
#include "models/dftd3/dftd3.h"
#include "models/eam/eam.h"
#include "models/eam/potential_file.h"
#include "models/ewald/ewald.h"
#include "models/lj/lj.h"
#include "models/mpnn/mpnn.h"
#include "models/pme/pme.h"
#ifdef DISTSPEC_WITH_TORCH
#include "models/torch/torch_model.h"
#endif

namespace distspec::models {
namespace {

struct Architecture {
  std::string name;
  std::unique_ptr<Model> (*make)(const ModelFile&, Device);
  void (*register_ops)(OpRegistry&);       // nullptr: the model registers no kernels
  void (*register_cuda_ops)(OpRegistry&);  // likewise, for Device::cuda
  bool fp32 = false;                       // has fp32 kernels (else fp64 only)
  // The shipped spec (potentials/specs/, compiled in) a model file that names none runs under;
  // nullptr: a model file must name its spec.
  const char* default_spec = nullptr;
  // Reads a file of another program that a model file of this architecture wraps (a LAMMPS
  // potential file) as the model file it stands for. nullptr: none.
  std::optional<Json> (*foreign_file)(std::string_view bytes, const std::string& path) = nullptr;
  // Rows of one architecture name that differ by calling convention: this row serves the files
  // it accepts (nullptr: every file of the name that an earlier row did not take).
  bool (*serves)(const ModelFile&) = nullptr;
};

#ifdef DISTSPEC_WITH_CUDA
constexpr void (*kLJCuda)(OpRegistry&) = lj::register_cuda_ops;
constexpr void (*kEAMCuda)(OpRegistry&) = eam::register_cuda_ops;
constexpr void (*kEwaldCuda)(OpRegistry&) = ewald::register_cuda_ops;
constexpr void (*kPmeCuda)(OpRegistry&) = pme::register_cuda_ops;
#else
constexpr void (*kLJCuda)(OpRegistry&) = nullptr;
constexpr void (*kEAMCuda)(OpRegistry&) = nullptr;
constexpr void (*kEwaldCuda)(OpRegistry&) = nullptr;
constexpr void (*kPmeCuda)(OpRegistry&) = nullptr;
#endif

#ifdef DISTSPEC_WITH_TORCH
constexpr auto kTorchMake = torch_kind::make_model;
constexpr void (*kTorchOps)(OpRegistry&) = torch_kind::register_ops;
constexpr auto kSevenNetSerialMake = torch_kind::make_sevennet_serial_model;
constexpr bool (*kSevenNetSerial)(const ModelFile&) = torch_kind::is_sevennet_serial;
#else
// Model files of the torch kind parse in every build, so that the message is about the build.
std::unique_ptr<Model> torch_unavailable(const ModelFile& file, Device) {
  throw Error(model_error_id::value, "/architecture", "architecture 'torch' needs a DISTSPEC built with LibTorch",
              "configure with -DDISTSPEC_PYTHON=<python with torch> (or -DTorch_DIR=...) and DISTSPEC_ENABLE_TORCH=ON",
              file.path);
}
constexpr auto kTorchMake = torch_unavailable;
constexpr void (*kTorchOps)(OpRegistry&) = nullptr;
constexpr auto kSevenNetSerialMake = torch_unavailable;
constexpr bool (*kSevenNetSerial)(const ModelFile&) = nullptr;
#endif

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> list{
      {"lj", lj::make_model, lj::register_ops, kLJCuda, false, "lj_halo.json"},
      {"eam", eam::make_model, eam::register_ops, kEAMCuda, false, "eam_halo.json", eam::model_for_potential_file},
      // The network runs on the tape (lib/distspec/tensor) on the cpu, as its own kernels on
      // cuda: no op of either is called through the dispatcher.
      {"mpnn", mpnn::make_model, nullptr, nullptr, true, "mpnn_halo.json"},
      {"ewald", ewald::make_model, ewald::register_ops, kEwaldCuda, false, "ewald_halo.json"},
      // Computed in the model (no op adapters in nvalchemi's spec); its halo refreshes are the
      // spec's.
      {"dftd3", dftd3::make_model, nullptr, nullptr, false, "dftd3_halo.json"},
      // Smooth particle-mesh Ewald under nvalchemi's PME spec: the charge mesh is spread per rank
      // and all-reduced by the spec's adapter; its real-space pairs are the Ewald model's kernel.
      {"pme", pme::make_model, pme::register_ops, kPmeCuda, false, "pme_halo.json"},
      // An exported PyTorch graph: its halo ops run inside the graph (lib/models/torch); the
      // registry holds their names for the dispatcher, on every device, and the graph's own
      // precision is checked against the one asked for.
      // SevenNet's own serial module (lib/models/torch/sevennet_serial.h): one rank, SevenNet's
      // inputs, no halo ops.
      {"torch", kSevenNetSerialMake, kTorchOps, nullptr, true, nullptr, nullptr, kSevenNetSerial},
      {"torch", kTorchMake, kTorchOps, nullptr, true},
  };
  return list;
}

}  // namespace

const std::vector<std::string>& architecture_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Architecture& a : architectures())
      if (std::find(out.begin(), out.end(), a.name) == out.end()) out.push_back(a.name);
    return out;
  }();
  return names;
}

std::optional<Json> model_for_foreign_file(std::string_view bytes, const std::string& path) {
  for (const Architecture& a : architectures())
    if (a.foreign_file)
      if (auto model = a.foreign_file(bytes, path)) return model;
  return std::nullopt;
}

std::optional<DefaultSpec> default_spec(const std::string& architecture) {
  for (const Architecture& a : architectures())
    if (a.name == architecture && a.default_spec) {
      const auto text = builtin_spec_text(a.default_spec);
      if (!text)  // the table and lib/models/CMakeLists.txt's list disagree: a build error
        throw Error(model_error_id::value, "/spec", std::string("the default spec ") + a.default_spec +
                                                        " of architecture '" + architecture + "' is not compiled in");
      return DefaultSpec{a.default_spec, *text};
    }
  return std::nullopt;
}

const ArchitectureTable& architecture_table() {
  static const ArchitectureTable table{architecture_names(), &default_spec, &model_for_foreign_file};
  return table;
}

ModelFile read_model_file(const std::string& path, const std::string& spec_override) {
  return read_model_file(path, spec_override, architecture_table());
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  for (const Architecture& a : architectures()) {
    if (a.name != file.architecture || (a.serves && !a.serves(file))) continue;
    // A precision the kernels do not have must not be ignored silently.
    if (file.precision == "fp32" && !a.fp32)
      throw Error(model_error_id::value, "/runtime/precision",
                  "architecture '" + a.name + "' runs in fp64 only, fp32 was requested",
                  "use precision fp64 (pair_style keyword or the model file's runtime.precision)", file.path);
    return a.make(file, device);
  }
  // parse_model_file only lets known architectures through; a ModelFile built in code may not.
  throw Error(model_error_id::value, "/architecture", "unknown architecture '" + file.architecture + "'",
              "expected one of " + join_names(architecture_names()), file.path);
}

namespace {

void register_ops_of(const Architecture& a, OpRegistry& registry) {
  if (a.register_ops) a.register_ops(registry);
  if (a.register_cuda_ops) a.register_cuda_ops(registry);
}

}  // namespace

void register_builtin_ops(OpRegistry& registry) {
  // OpRegistry::add replaces a kernel of the same name and device, so repeating is harmless.
  for (const Architecture& a : architectures()) register_ops_of(a, registry);
}

void register_architecture_ops(const std::string& architecture, OpRegistry& registry) {
  for (const Architecture& a : architectures())
    if (a.name == architecture) return register_ops_of(a, registry);
  throw Error(model_error_id::value, "/architecture", "unknown architecture '" + architecture + "'",
              "expected one of " + join_names(architecture_names()));
}

}  // namespace distspec::models
