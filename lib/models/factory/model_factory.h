// From a model file to a running model, and the registration of every kernel this library
// provides. Registration is explicit: static registrars would be dropped by the linker from a
// static archive whose objects nothing else references.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "distspec/error.h"
#include "distspec/ops/op_registry.h"
#include "models/model.h"
#include "models/model_file.h"

namespace distspec::models {

// The architectures make_model knows ("lj", "eam", "mpnn", "ewald", "torch"; "torch" needs a
// build with LibTorch, DISTSPEC_WITH_TORCH, and is an error at make_model elsewhere).
const std::vector<std::string>& architecture_names();

// A file that is no model file but one of another program that an architecture wraps (a
// LAMMPS EAM potential file given to pair_coeff): the model file (JSON) it stands for, which
// names no spec (its architecture's default applies). std::nullopt for anything else; a file
// that is one of those but is broken throws its reader's distspec::Error.
std::optional<Json> model_for_foreign_file(std::string_view bytes, const std::string& path);

// The spec a model file of `architecture` runs under when it names none (model_file.h
// DefaultSpec). std::nullopt for architectures without one (torch: the exporter writes the
// model's spec).
std::optional<DefaultSpec> default_spec(const std::string& architecture);

// The table above, as parse_model_file takes it.
const ArchitectureTable& architecture_table();

// A model file read with the built-in architectures (model_file.h read_model_file).
ModelFile read_model_file(const std::string& path, const std::string& spec_override = "");

// Builds the model the file describes, running on `device`; parameter errors point into the
// file. Device::cuda needs a build with DISTSPEC_ENABLE_CUDA (else distspec::Error, id
// model.device) and a CUDA device; such a model takes host graphs and returns host outputs, and
// runs under a Dispatcher built for Device::cuda.
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);

// Adds every kernel of every model to `registry`, the cuda kernels too in builds with CUDA.
// Idempotent.
void register_builtin_ops(OpRegistry& registry = OpRegistry::global());

// Adds the kernels of one architecture only: for a process that evaluates a model beside a
// loaded plugin (which registers the torch kind's ops with LibTorch itself), or a registry
// that should hold nothing else. Throws distspec::Error for an unknown architecture.
void register_architecture_ops(const std::string& architecture, OpRegistry& registry);

}  // namespace distspec::models
