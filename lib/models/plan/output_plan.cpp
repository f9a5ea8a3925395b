// The output plan derived from an MLIPSpec.
#include "models/plan/output_plan.h"

#include "distspec/error.h"

namespace distspec::models {

namespace {

// An output LAMMPS takes per atom must be declared per_node when the spec declares it at all.
void require_kind(const distspec::MLIPSpec &spec, const std::string &name, OutputKind kind, const char *why)
{
  auto declared = spec.output_kind(name);
  if (declared && *declared != kind && *declared != OutputKind::unknown)
    throw distspec::Error(distspec::error_id::value, "/output_kinds",
                          "output '" + name + "' is declared " + std::string(to_string(*declared)) + ", LAMMPS needs it " +
                              std::string(to_string(kind)) + " (" + why + ")",
                          "declare [\"" + name + "\", \"" + std::string(to_string(kind)) + "\"]");
}

}    // namespace

OutputPlan OutputPlan::from_spec(const distspec::MLIPSpec &spec)
{
  require_kind(spec, "forces", OutputKind::per_node, "one force per atom");
  require_kind(spec, "energy", OutputKind::per_graph, "one energy per system");
  const std::string node_energy = spec.node_energy_key.value_or("atomic_energies");
  const std::string node_virial = spec.node_virial_key.value_or("atomic_virial");
  require_kind(spec, node_energy, OutputKind::per_node, "per-atom energy");

  OutputPlan plan;
  plan.forces_owned_only = spec.is_owned_only("forces");
  plan.energy_rows_owned_only = spec.is_owned_only(node_energy);
  plan.virial_rows_owned_only = spec.is_owned_only(node_virial);
  plan.compile = spec.compile;
  return plan;
}

std::string OutputPlan::describe() const
{
  std::string s = "energy: owned rows summed per rank; virial: per-rank partial summed by LAMMPS\n";
  s += forces_owned_only ? "  forces: owned-only (halo rows zeroed, nothing folded)\n"
                         : "  forces: halo-row partials folded to owners\n";
  if (!compile) return s + "  compile: none (forces from the model)\n";
  switch (compile->force_strategy) {
    case distspec::ForceStrategy::model_internal:
      s += "  compile: model_internal (forces from the model)\n";
      break;
    case distspec::ForceStrategy::framework_from_node_energy:
      s += "  compile: framework_from_node_energy (forces = -d/dx of the owned sum of per-atom energies)\n";
      break;
    case distspec::ForceStrategy::framework_from_global_energy:
      s += "  compile: framework_from_global_energy (forces = -d/dx of the model's system energy)\n";
      break;
  }
  if (compile->stress_via_strain) s += "  stress: strain derivative of the energy (stress_via_strain)\n";
  return s;
}

}  // namespace distspec::models
