#include "models/plan/spec_binding.h"

#include <algorithm>

#include "distspec/error.h"
#include "distspec/spec/helper_record.h"
#include "models/model_file.h"

namespace distspec::models {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// An error about a spec value, attributed to where the spec came from: a spec file, or the
// model file for an inline spec, whose pointers then start at /spec.
Error attributed(const Error& e, const BindingSources& sources) {
  if (sources.spec_source == "inline") return e.with_pointer_prefix("/spec").with_file(sources.model_file);
  return e.with_file(sources.spec_source);
}

[[noreturn]] void fail_spec(const BindingSources& sources, const std::string& pointer, std::string message,
                            std::string hint) {
  throw attributed(Error(error_id::value, pointer, std::move(message), std::move(hint)), sources);
}

// An error about the run: the model cannot run with what the host provides.
[[noreturn]] void fail_run(std::string message, std::string hint) {
  throw Error("binding.host", "", std::move(message), std::move(hint));
}

void check_units(const ModelFile& file, const ModelInfo& info, const HostFacts& host) {
  if (info.units == host.units) return;
  throw Error(error_id::value, "/units",
              "the model is in '" + info.units + "' units, this run uses 'units " + host.units + "'",
              "use 'units " + info.units + "' in the input, or a model file in " + host.units + " units", file.path);
}

// Owned-only forces drop whatever the model leaves on halo rows.
void check_owned_only_forces(const ModelFile& file, const ModelInfo& info, const BindingSources& sources) {
  if (!file.spec.is_owned_only("forces") || !info.forces_on_halo_rows) return;
  fail_spec(sources, "/owned_only_outputs",
            "the spec lists 'forces' in owned_only_outputs, but model " + file.path + " (" + info.architecture +
                ") leaves parts of each atom's force on the halo rows of other ranks: they would be dropped",
            "remove \"forces\" from owned_only_outputs, or use the spec written for this model");
}

// Every model reads positions and species on every row, halo rows included: a spec that does
// not promote them (nvalchemi's AIMNet2 spec promotes positions only, its UMA spec nothing)
// would hand the model rows without them. A model of plain rows takes them regardless.
void check_promoted_inputs(const ModelFile& file, const ModelInfo& info, const BindingSources& sources) {
  if (info.plain_input_rows) return;
  for (const char* field : {"positions", "atomic_numbers"})
    if (!contains(file.spec.core.shard_fields, field))
      fail_spec(sources, "/core/shard_fields",
                "model " + file.path + " (" + info.architecture + ") reads " +
                    (std::string(field) == "positions" ? "positions" : "species") + " on every row, but the "
                    "spec's shard_fields do not promote '" + field + "' onto halo rows",
                "add \"" + std::string(field) + "\" to core.shard_fields");
}

// A serial model maps periodic images onto their owners, which on more ranks live elsewhere.
void check_serial(const ModelFile& file, const ModelInfo& info, const HostFacts& host) {
  if (!info.needs_owner_rows || host.n_ranks <= 1) return;
  fail_run("model " + file.path + " is a serial model (it maps periodic images onto their owners, and has no halo "
               "exchange), and this run has " + std::to_string(host.n_ranks) + " MPI ranks",
           "run it on one rank, or export the model for many ranks with tools/distspec-export (its halo ops "
           "refresh features over LAMMPS' communication)");
}

// nvalchemi's default shard_fields name charges for every model; only a model that reads them
// makes a missing charge field an error.
void check_charges(const ModelFile& file, const ModelInfo& info, const HostFacts& host,
                   const BindingSources& sources) {
  if (!info.reads_charges) return;
  if (!info.plain_input_rows && !contains(file.spec.core.shard_fields, "charges"))
    fail_spec(sources, "/core/shard_fields",
              "model " + file.path + " reads charges, but the spec's shard_fields do not promote 'charges' onto "
                  "halo rows",
              "add \"charges\" to core.shard_fields");
  if (!host.has_charges)
    fail_run("the spec's shard_fields promote 'charges' and model " + file.path + " reads them, but atom style '" +
                 host.atom_style + "' has no charge",
             "use an atom style with charges (charge, full)");
  // Bonded neighbours are left out of the neighbour list by special_bonds, but a model that
  // reads charges would still count their Coulomb energy in its other terms (Ewald's k-space).
  if (host.bonds_scale_coulomb)
    fail_run("model " + file.path + " reads charges, and this system has bonds with special_bonds coul " +
                 host.special_coul + "; excluded or scaled Coulomb pairs are not supported by this style",
             "use special_bonds coul 1.0 1.0 1.0, or pair_style coul/long with kspace_style ewald");
}

void check_periodicity(const ModelFile& file, const ModelInfo& info, const HostFacts& host) {
  if (!info.needs_periodic_cell) return;
  if (host.periodic[0] && host.periodic[1] && host.periodic[2]) return;
  fail_run("model " + file.path + " (" + info.architecture +
               ") sums over periodic images and needs a box periodic in x, y and z, this run has boundary " +
               host.boundary,
           "use boundary p p p");
}

// A model that reads halo rows of values it computed itself needs the spec to refresh them.
HaloStrategy check_halo_refreshes(const ModelFile& file, const ModelInfo& info, const HostFacts& host,
                                  const BindingSources& sources) {
  const int layers = info.message_passing_layers;
  const bool expanded = host.halo == HaloStrategy::expanded && layers > 1;
  const int reads = std::max(info.halo_feature_reads, layers - 1);
  const StoragePolicy& policy = file.spec.core.policy;
  if (reads > 0 && !expanded && !(policy.is_halo_kind() && policy.halo_gather()))
    fail_spec(sources, "/core/policy",
              "the spec's gather_mode '" + policy.gather_mode.value_or("(none: policy " + policy.kind + ")") +
                  "' never refreshes halo rows, but model " + file.path + " reads neighbour values it computed "
                  "itself " + std::to_string(reads) + " time(s) per step from them: the results would be wrong",
              std::string("use a spec with gather_mode 'halo_read'") + (layers > 1 ? ", or 'halo expanded'" : ""));
  return expanded ? HaloStrategy::expanded : HaloStrategy::per_layer;
}

// A model that corrects halo rows after a scatter needs the spec to say so.
void check_scatter_corrections(const ModelFile& file, const ModelInfo& info, HaloStrategy halo,
                               const BindingSources& sources) {
  const StoragePolicy& policy = file.spec.core.policy;
  if (!info.halo_scatter_corrections || halo == HaloStrategy::expanded || (policy.is_halo_kind() && policy.halo_scatter()))
    return;
  fail_spec(sources, "/core/policy",
            "the spec's scatter_mode '" + policy.scatter_mode.value_or("(none: policy " + policy.kind + ")") +
                "' never corrects halo rows after a scatter, but model " + file.path +
                " corrects them and reads them afterwards: the results would be wrong",
            "use a spec with scatter_mode 'halo_correction' (the spec the model was exported with)");
}

void check_helpers(const ModelFile& file, const HostFacts& host, const BindingSources& sources,
                   std::vector<std::string>& warnings) {
  for (const auto& helper : file.spec.core.third_party_helpers) {
    if (native_meaning(helper)) continue;
    const std::string text = "helper record '" + helper_target(helper) + "' (kind " +
                             std::string(helper_kind(helper)) + ") has no native meaning";
    if (host.strict)
      fail_spec(sources, "/core/third_party_helpers", text, "remove it from the spec, or run with 'strict no' to ignore it");
    warnings.push_back(text + "; ignored");
  }
}

}  // namespace

void check_policy_runs(const MLIPSpec& spec, int n_ranks, const BindingSources& sources) {
  try {
    Dispatcher::check_policy(spec.core.policy, n_ranks);
  } catch (const Error& e) {
    throw attributed(e, sources);
  }
}

void check_adapted_ops(const MLIPSpec& spec, const ModelInfo& info, const BindingSources& sources) {
  const auto& ops = spec.core.custom_ops;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const std::string& op = ops[k].op;
    if (contains(qualnames(info.ops), op) || contains(info.family_ops, op) || contains(info.opaque_ops, op)) continue;
    std::vector<std::string> called = qualnames(info.ops);
    called.insert(called.end(), info.opaque_ops.begin(), info.opaque_ops.end());
    fail_spec(sources, "/core/custom_ops/" + std::to_string(k) + "/op",
              "the spec adapts op '" + op + "', which model " + sources.model_file + " (" + info.architecture +
                  ") never calls (it calls: " +
                  (called.empty() ? std::string("no op through the dispatcher") : joined(called)) + ")",
              "use the spec written for this model");
  }
  // The other direction: a kernel the graph calls on its own is part of the model's contract
  // with its spec (nvalchemi lists cuEquivariance's ops in its MACE spec); a spec without it was
  // written for another build of the model.
  for (const std::string& op : info.opaque_ops) {
    const bool listed = std::any_of(ops.begin(), ops.end(), [&](const OpAdapter& a) { return a.op == op; });
    if (!listed)
      fail_spec(sources, "/core/custom_ops",
                "model " + sources.model_file + " calls op '" + op +
                    "' (an accelerator's kernel), which the spec does not list",
                "add {\"op\": \"" + op +
                    "\", \"arg_transforms\": {}, \"output_transforms\": {}} to core.custom_ops, or use the spec "
                    "tools/distspec-export wrote with the graph");
  }
}

RunPlan bind_model(const ModelFile& file, const ModelInfo& info, const HostFacts& host) {
  const BindingSources sources{file.path, file.spec_source};
  // A serial model runs on one rank whatever its spec says: say that before the spec's rules.
  check_serial(file, info, host);
  check_policy_runs(file.spec, host.n_ranks, sources);
  check_units(file, info, host);
  // A spec written for another model is the cause of most other disagreements: say so first.
  check_adapted_ops(file.spec, info, sources);
  check_owned_only_forces(file, info, sources);
  check_promoted_inputs(file, info, sources);
  check_charges(file, info, host, sources);
  check_periodicity(file, info, host);
  const HaloStrategy halo = check_halo_refreshes(file, info, host, sources);
  check_scatter_corrections(file, info, halo, sources);
  RunPlan plan = plan_run(OutputPlan::from_spec(file.spec), info, host, halo);
  const auto& fields = file.spec.core.shard_fields;
  plan.inputs.positions = info.plain_input_rows || contains(fields, "positions");
  plan.inputs.species = info.plain_input_rows || contains(fields, "atomic_numbers");
  plan.inputs.charges = host.has_charges && (info.plain_input_rows ? info.reads_charges : contains(fields, "charges"));
  check_helpers(file, host, sources, plan.warnings);
  plan.warnings.insert(plan.warnings.end(), info.warnings.begin(), info.warnings.end());
  return plan;
}

}  // namespace distspec::models
