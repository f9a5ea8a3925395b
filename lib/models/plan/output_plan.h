// How a model's outputs return to the host (LAMMPS), as the MLIPSpec classifies them:
//
//   energy          sum over owned rows, per rank (LAMMPS sums ranks for thermo)
//   forces          per_node; halo-row partials fold to owners (LAMMPS reverse comm under
//                   newton_pair on, the style's own reverse exchange under newton_pair off),
//                   unless listed in owned_only_outputs: then exact on owned rows, halo rows
//                   zeroed before any fold
//   stress (virial) a per-rank partial (all_reduce_outputs): LAMMPS' own sum over ranks is the
//                   all-reduce, so nothing is divided by the number of ranks
//   per-atom energy and virial fold like forces, then land in eatom / vatom
//   compile         who produces forces and stress (nvalchemi's CompilePolicy): the model's
//                   forward, or the derivative of an energy. The native kernels differentiate
//                   each rank's owned energy analytically, which is what the framework_*
//                   strategies ask for; the plan records it so the log says which contract the
//                   run follows and other model kinds can honour it
#pragma once

#include "distspec/spec/mlip_spec.h"

#include <optional>
#include <string>

namespace distspec::models {

struct OutputPlan {
  bool forces_owned_only = false;
  bool energy_rows_owned_only = false;
  bool virial_rows_owned_only = false;
  std::optional<distspec::CompilePolicy> compile;  // the spec's; none: the model computes its forces

  // Throws distspec::Error when the spec declares outputs LAMMPS cannot take as declared.
  static OutputPlan from_spec(const distspec::MLIPSpec &spec);
  std::string describe() const;
};

}  // namespace distspec::models
