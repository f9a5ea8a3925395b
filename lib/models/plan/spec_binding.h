// Binding rules: what a spec and a host must provide for a given model to run. They depend on
// the spec, the model's declared needs and a few facts the host hands in, never on LAMMPS
// itself, so every model kind goes through them and they are unit-tested without a host. Each
// throws distspec::Error naming the file and, for a spec value, its JSON pointer.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/spec/mlip_spec.h"
#include "models/model.h"
#include "models/plan/run_plan.h"

namespace distspec::models {

struct ModelFile;

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

// Every rule, in the order a user should hear about problems: the policy, units, adapters,
// owned-only forces, charges and bonded Coulomb pairs, periodicity, halo refreshes and
// corrections, helper records; then the layout of the run (plan_run).
RunPlan bind_model(const ModelFile& file, const ModelInfo& info, const HostFacts& host);

}  // namespace distspec::models
