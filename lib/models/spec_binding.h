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

namespace distspec::models {

struct ModelFile;

// Where the model and its spec came from, for messages: the model file, and the spec file (or
// "inline" for a spec inside the model file, whose pointers then start at /spec).
struct BindingSources {
  std::string model_file;
  std::string spec_source;
};

// What the host knows about the run that the rules need (LAMMPS: units, atom style, boundary,
// special_bonds, the pair_style words).
struct HostFacts {
  std::string units;                          // the run's units style
  int n_ranks = 1;
  bool has_charges = false;                   // the atom style carries a charge per atom
  std::string atom_style;                     // for messages
  std::array<bool, 3> periodic{true, true, true};
  std::string boundary;                       // for messages, as the host spells it
  bool bonds_scale_coulomb = false;           // bonded pairs whose Coulomb term is excluded or scaled
  std::string special_coul;                   // for messages
  HaloStrategy halo = HaloStrategy::per_layer;  // as asked for
  bool strict = false;                        // helper records without native meaning are errors
};

// What binding decided.
struct Binding {
  // The halo strategy that runs: expanded only when asked for and the model has layers to
  // expand (for one layer both strategies are the same computation).
  HaloStrategy halo = HaloStrategy::per_layer;
  std::vector<std::string> warnings;  // what the host should report and run on regardless
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
// corrections, helper records.
Binding bind_model(const ModelFile& file, const ModelInfo& info, const HostFacts& host);

}  // namespace distspec::models
