// nvalchemi's CompilePolicy: who produces forces and stress under domain decomposition. The
// released writer ends every MLIPSpec with it ("compile": null or this object); a spec without
// it describes a model that computes its own forces.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace distspec {

// nvalchemi's ForceStrategy, by its JSON values.
enum class ForceStrategy {
  model_internal,               // the model's forward returns forces; the framework consolidates them
  framework_from_node_energy,   // forces = -d/dx of the owned sum of per-node energies (the MACE pattern)
  framework_from_global_energy  // forces = -d/dx of the model's own per-system energy (the AIMNet2 pattern)
};

std::string_view to_string(ForceStrategy s);
std::optional<ForceStrategy> force_strategy_from_string(std::string_view name);
std::string force_strategy_list();  // "model_internal, framework_from_node_energy, ..."

struct CompilePolicy {
  bool static_shapes = true;
  ForceStrategy force_strategy = ForceStrategy::model_internal;
  // Stress as the derivative of the energy with respect to a strain of positions and cell.
  // nvalchemi sets it only where the model's whole cell dependence is differentiable.
  bool stress_via_strain = false;

  // Forces come from differentiating an energy rather than from the model's forward: each
  // rank differentiates its owned energy, so halo-row partials must be folded to their owners.
  bool forces_via_autograd() const { return force_strategy != ForceStrategy::model_internal; }
};

inline bool operator==(const CompilePolicy& a, const CompilePolicy& b) {
  return a.static_shapes == b.static_shapes && a.force_strategy == b.force_strategy &&
         a.stress_via_strain == b.stress_via_strain;
}
inline bool operator!=(const CompilePolicy& a, const CompilePolicy& b) { return !(a == b); }

}  // namespace distspec
