// Binding rules: what a spec must say for a given model to run under it. They depend on the
// spec and on the model's declared needs only, never on LAMMPS, so both the native models and
// other model kinds go through them, and they are unit-tested without a host. Each throws
// distspec::Error naming the spec file and the JSON pointer of the value at fault.
#pragma once

#include <string>

#include "distspec/spec/mlip_spec.h"
#include "models/model.h"

namespace distspec::models {

// Where the model and its spec came from, for messages: the model file, and the spec file (or
// "inline" for a spec inside the model file, whose pointers then start at /spec).
struct BindingSources {
  std::string model_file;
  std::string spec_source;
};

// The spec's policy runs under a spatial decomposition over `n_ranks` ranks (not a
// graph-partition or sharded policy; `local` on one rank only).
void check_policy_runs(const MLIPSpec& spec, int n_ranks, const BindingSources& sources);

// Every op adapter of the spec names an op the model calls or one of its family; any other
// op means the spec was written for another model, and its transforms meant for this model's
// ops are missing.
void check_adapted_ops(const MLIPSpec& spec, const ModelInfo& info, const BindingSources& sources);

}  // namespace distspec::models
