// The DISTSPEC model file: one JSON document that names a model's architecture, units, cutoff,
// elements and parameters, and the distribution spec it runs under.
//
//   {
//     "format": "distspec-model",          required, exactly this string
//     "format_version": 1,                 required, exactly 1
//     "architecture": "lj",                required, one of the architecture table's names
//     "description": "...",                optional strings, kept for logs and provenance
//     "source": "...", "license": "...",
//     "units": "metal",                    required, a LAMMPS units name the parameters are in
//     "cutoff": 5.0,                       required, finite and > 0 (the neighbour cutoff)
//     "elements": ["Cu", "Ni"],            required, non-empty, no repeats; species i = elements[i]
//     "parameters": {...},                 architecture-specific object, and/or
//     "parameters_file": "x.eam.alloy",    a file read by the architecture (relative paths are
//                                          resolved from the model file's folder); one of the
//                                          two is required
//     "spec": {...} | "specs/x.json",      MLIPSpec v2 object inline, or a path to the file
//                                          nvalchemi wrote (relative to the model file's folder);
//                                          required unless a spec override is given or the
//                                          architecture has a default (the table's
//                                          default_spec: the shipped spec, compiled in)
//     "runtime": {                         optional: what a native runtime needs beyond the spec
//       "autograd_outputs": ["forces"],    outputs taken from autograd (default: none)
//       "force_strategy": "analytic",      "analytic" (kernels return forces, the default) or
//                                          "autograd"
//       "precision": "fp32"                "fp64" | "fp32": overrides the architecture's
//     }                                    default (models that support both)
//   }
//
// Unknown keys are errors (a misspelt "parameters_file" must not pass silently). Every error
// is a distspec::Error carrying the model file's name and the JSON pointer of the bad value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "distspec/error.h"
#include "distspec/spec/mlip_spec.h"
#include "models/json_fields.h"
#include "models/model.h"

namespace distspec::models {

enum class ForceStrategy { analytic, autograd };

struct ModelFile {
  std::string path;          // as given
  std::string dir;           // folder relative paths inside the file are resolved from
  std::string architecture;
  std::string description;
  std::string source;
  std::string license;
  std::string units;
  double cutoff = 0.0;
  std::vector<std::string> elements;
  Json parameters = Json::object();  // {} when the file gives only parameters_file
  std::string parameters_file;       // resolved path, or empty
  MLIPSpec spec;
  std::string spec_source;  // the spec file's path, or "inline"
  // SHA-256 of the spec's canonical JSON (distspec/util/canonical_json.h), whether inline or in
  // its file, which an exported model file records to be checked against (parameters.spec_sha256);
  // empty for a spec given on the pair_style line or a built-in one.
  std::string spec_sha256;
  std::vector<std::string> autograd_outputs;
  ForceStrategy force_strategy = ForceStrategy::analytic;
  std::string precision;  // runtime.precision, or empty: the architecture's own choice
  // pair_style distspec's `edges` (plan/style_settings.h): "cutoff" or "skin"; read by exported torch
  // graphs only (the native models take the neighbour list as it is).
  std::string edges = "cutoff";
  bool cuda_graph = false;  // pair_style distspec's `cuda_graph`; exported torch graphs on the GPU only

  // A path named inside the model file, resolved from its folder.
  std::string resolve(const std::string& relative) const;
};

// The spec a model file of an architecture runs under when it names none: a shipped spec file
// (potentials/specs/), compiled in.
struct DefaultSpec {
  std::string name;       // "eam_halo.json"
  std::string_view text;  // its bytes
};

// What the parser must know of the architectures. The layer that makes models owns the table and
// hands it in (factory/model_factory.h architecture_table()), so that reading a file includes nothing
// above it.
struct ArchitectureTable {
  std::vector<std::string> names;  // the values "architecture" may take
  // The architecture's built-in spec, or std::nullopt (torch: the exporter writes the model's).
  std::optional<DefaultSpec> (*default_spec)(const std::string& architecture) = nullptr;
  // The model file (JSON) that a file of another program stands for (a LAMMPS EAM potential file
  // given to pair_coeff), or std::nullopt; a broken one throws its reader's distspec::Error.
  std::optional<Json> (*foreign_file)(std::string_view bytes, const std::string& path) = nullptr;
};

// Parses model-file bytes (the LAMMPS glue reads them on rank 0 and broadcasts; every rank
// parses); bytes that are no JSON but a file an architecture wraps (a LAMMPS EAM potential file)
// parse as the model file they stand for (ArchitectureTable::foreign_file). `path` names the file
// in errors and anchors relative paths. A non-empty `spec_override` (pair_style distspec spec
// FILE, relative to the working directory) replaces the model's spec. Throws distspec::Error.
ModelFile parse_model_file(std::string_view bytes, const std::string& path, const std::string& spec_override,
                           const ArchitectureTable& architectures);
ModelFile read_model_file(const std::string& path, const std::string& spec_override,
                          const ArchitectureTable& architectures);

// The fields every model takes from its file as they are: architecture, units, cutoff, elements.
ModelInfo info_from(const ModelFile& file);

// Runs an architecture's spec rule `check` on the file's spec. Its errors name the spec file, or,
// for a spec inline in the model file, point under /spec (the caller adds the model file).
void check_file_spec(const ModelFile& file, void (*check)(const MLIPSpec&));

// Throws (pointer /parameters_file) for a file that names a parameters file: `architecture`
// takes its parameters inline.
void require_inline_parameters(const ModelFile& file, const std::string& architecture);

// Runs `read` (an architecture's reading of its file) and gives its errors that name no file the
// model file's path; errors in a file it reads (a potential file, a spec file) keep theirs.
template <class Read>
auto with_model_file_errors(const ModelFile& file, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const Error& e) {
    if (!e.file().empty()) throw;
    throw e.with_file(file.path);
  }
}

}  // namespace distspec::models
