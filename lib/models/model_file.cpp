#include "models/model_file.h"

#include <filesystem>
#include <optional>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "distspec/strict_json.h"
#include "distspec/util/canonical_json.h"
#include "distspec/util/sha256.h"
#include "models/not_model_file.h"

namespace distspec::models {
namespace {

namespace fs = std::filesystem;

constexpr char kFormat[] = "distspec-model";
constexpr int kFormatVersion = 1;

// LAMMPS `units` styles (doc/src/units.rst).
const std::vector<std::string>& lammps_units() {
  static const std::vector<std::string> names{"lj", "real", "metal", "si", "cgs", "electron", "micro", "nano"};
  return names;
}

std::string folder_of(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

std::vector<std::string> read_elements(const Json& value) {
  const Json& list = expect_array(value, "/elements");
  if (list.empty()) fail_value("/elements", "expected at least one element, found an empty list");
  std::vector<std::string> elements;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/elements/" + std::to_string(i);
    std::string name = expect_string(list[i], at);
    if (name.empty() || name.find_first_of(" \t\r\n") != std::string::npos)
      fail_value(at, "element name '" + name + "' is empty or contains whitespace",
                 "use the names pair_coeff gives, e.g. \"Cu\"");
    for (std::size_t k = 0; k < elements.size(); ++k)
      if (elements[k] == name)
        fail_value(at, "element '" + name + "' is listed twice (also at /elements/" + std::to_string(k) + ")",
                   "list each element once; species index i is elements[i]");
    elements.push_back(std::move(name));
  }
  return elements;
}

void read_spec(const Json* value, ModelFile& m, const std::string& spec_override,
               const ArchitectureTable& architectures) {
  if (!spec_override.empty()) {
    m.spec = read_mlip_spec_file(spec_override);
    m.spec_source = spec_override;
    return;
  }
  if (!value) {
    // A built-in architecture's own spec, compiled in (distspec-spec ARCHITECTURE writes it out).
    if (const auto builtin = architectures.default_spec ? architectures.default_spec(m.architecture) : std::nullopt) {
      m.spec_source = builtin->name + " (built in)";
      m.spec = read_mlip_spec(builtin->text, m.spec_source);
      return;
    }
    throw Error(model_error_id::missing_key, "/spec", "missing required key 'spec'",
                "give the MLIPSpec inline, a path to a spec file, or `pair_style distspec spec FILE`");
  }
  if (value->is_object()) {
    m.spec = mlip_spec_from_json(*value, m.path, "/spec");
    m.spec_source = "inline";
    m.spec_sha256 = sha256_hex(canonical_json(*value));
  } else if (value->is_string()) {
    m.spec_source = m.resolve(value->get<std::string>());
    const std::string bytes = read_file_bytes(m.spec_source, "/spec");
    m.spec = read_mlip_spec(bytes, m.spec_source);
    m.spec_sha256 = sha256_hex(canonical_json(parse_json_strict(bytes, m.spec_source)));
  } else {
    throw Error(model_error_id::type, "/spec",
                "expected an MLIPSpec object or a path string, found " + json_type_phrase(*value));
  }
}

void read_runtime(const Json& value, ModelFile& m) {
  const Json& runtime = expect_object(value, "/runtime", {"autograd_outputs", "force_strategy", "precision"});
  if (const Json* outputs = find_member(runtime, "autograd_outputs")) {
    const Json& list = expect_array(*outputs, "/runtime/autograd_outputs");
    for (std::size_t i = 0; i < list.size(); ++i)
      m.autograd_outputs.push_back(expect_string(list[i], "/runtime/autograd_outputs/" + std::to_string(i)));
  }
  if (const Json* strategy = find_member(runtime, "force_strategy"))
    m.force_strategy = expect_choice(*strategy, "/runtime/force_strategy", {"analytic", "autograd"}) == "analytic"
                           ? ForceStrategy::analytic
                           : ForceStrategy::autograd;
  if (const Json* precision = find_member(runtime, "precision"))
    m.precision = expect_choice(*precision, "/runtime/precision", {"fp64", "fp32"});
}

ModelFile parse(const Json& root, const std::string& path, const std::string& spec_override,
                const ArchitectureTable& architectures) {
  expect_object(root, "",
                {"format", "format_version", "architecture", "description", "source", "license", "units", "cutoff",
                 "elements", "parameters", "parameters_file", "spec", "runtime"});
  ModelFile m;
  m.path = path;
  m.dir = folder_of(path);

  const std::string format = expect_string(require_member(root, "format", ""), "/format");
  if (format != kFormat)
    fail_value("/format", "expected \"" + std::string(kFormat) + "\", found \"" + format + "\"",
               "this is not a DISTSPEC model file");
  const int version = expect_int(require_member(root, "format_version", ""), "/format_version");
  if (version != kFormatVersion)
    fail_value("/format_version", "expected 1, found " + std::to_string(version),
               "this build reads model-file format version 1");

  m.architecture = expect_choice(require_member(root, "architecture", ""), "/architecture", architectures.names);
  for (auto [key, field] : {std::pair{"description", &m.description}, {"source", &m.source}, {"license", &m.license}})
    if (const Json* v = find_member(root, key)) *field = expect_string(*v, std::string("/") + key);
  m.units = expect_choice(require_member(root, "units", ""), "/units", lammps_units());
  m.cutoff = expect_positive(require_member(root, "cutoff", ""), "/cutoff");
  m.elements = read_elements(require_member(root, "elements", ""));

  const Json* parameters = find_member(root, "parameters");
  const Json* parameters_file = find_member(root, "parameters_file");
  if (!parameters && !parameters_file)
    throw Error(model_error_id::missing_key, "/parameters", "missing both 'parameters' and 'parameters_file'",
                "give the architecture's parameters inline or name a file beside the model file");
  if (parameters) {
    if (!parameters->is_object())
      throw Error(model_error_id::type, "/parameters", "expected an object, found " + json_type_phrase(*parameters));
    m.parameters = *parameters;
  }
  if (parameters_file) {
    const std::string name = expect_string(*parameters_file, "/parameters_file");
    if (name.empty()) fail_value("/parameters_file", "expected a file name, found an empty string");
    m.parameters_file = fs::absolute(m.resolve(name)).lexically_normal().string();
    open_file(m.parameters_file, "/parameters_file");
  }

  read_spec(find_member(root, "spec"), m, spec_override, architectures);
  if (const Json* runtime = find_member(root, "runtime")) read_runtime(*runtime, m);
  return m;
}

// An MLIPSpec (what nvalchemi's MLIPSpec.save() writes) where the model file belongs.
std::optional<Error> spec_not_model_file(const Json& root) {
  if (!root.is_object() || root.contains("format") || !root.contains("core") || !root.contains("version"))
    return std::nullopt;
  return Error(model_error_id::not_model_file, "",
               "this is an MLIPSpec (a spec file nvalchemi saved: 'version' and 'core'), not a DISTSPEC model file",
               "give pair_coeff the model file that names this spec under \"spec\" (distspec-export writes NAME.json "
               "beside NAME.spec.json), or this spec to `pair_style distspec spec FILE`");
}

}  // namespace

std::string ModelFile::resolve(const std::string& relative) const {
  const fs::path p(relative);
  return p.is_absolute() ? relative : (fs::path(dir) / p).lexically_normal().string();
}

ModelFile parse_model_file(std::string_view bytes, const std::string& path, const std::string& spec_override,
                           const ArchitectureTable& architectures) {
  try {
    Json root;
    try {
      root = parse_json_strict(bytes, path);
    } catch (const Error& e) {
      // Not JSON: a file of a kind that can be told (a PyTorch archive, a binary file), or a
      // LAMMPS potential file where the model file belongs, perhaps, which an architecture reads
      // as the model file it stands for.
      if (const auto other = recognise_not_model_file(bytes, path))
        throw Error(model_error_id::not_model_file, "", "this is " + other->looks_like + ", not a DISTSPEC model file",
                    other->hint, path);
      auto model = architectures.foreign_file ? architectures.foreign_file(bytes, path) : std::nullopt;
      if (!model) throw Error(e.id(), e.pointer(), e.message(), model_file_is_json_hint(), path);
      root = std::move(*model);
    }
    if (const auto spec = spec_not_model_file(root)) throw *spec;
    return parse(root, path, spec_override, architectures);
  } catch (const Error& e) {
    // Errors of a referenced file (a spec file) already name it; the rest name the model file.
    if (e.file().empty()) throw e.with_file(path);
    throw;
  }
}

ModelFile read_model_file(const std::string& path, const std::string& spec_override,
                          const ArchitectureTable& architectures) {
  std::string bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const Error&) {
    throw Error(model_error_id::io, "", "cannot read the model file", "check the path (relative to the working directory)",
                path);
  }
  return parse_model_file(bytes, path, spec_override, architectures);
}

ModelInfo info_from(const ModelFile& file) {
  ModelInfo info;
  info.architecture = file.architecture;
  info.units = file.units;
  info.cutoff = file.cutoff;
  info.elements = file.elements;
  return info;
}

void check_file_spec(const ModelFile& file, void (*check)(const MLIPSpec&)) {
  try {
    check(file.spec);
  } catch (const Error& e) {
    if (file.spec_source != "inline") throw e.with_file(file.spec_source);
    throw e.with_pointer_prefix("/spec");
  }
}

void require_inline_parameters(const ModelFile& file, const std::string& architecture) {
  if (!file.parameters_file.empty())
    fail_value("/parameters_file", "architecture '" + architecture + "' takes its parameters inline",
               "put them under \"parameters\"");
}

}  // namespace distspec::models
