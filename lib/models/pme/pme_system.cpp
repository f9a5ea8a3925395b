#include "models/pme/pme_system.h"

#include "distspec/error.h"
#include "models/ewald/ewald_kspace.h"
#include "models/model_error.h"

namespace distspec::models::pme {

void check_cell(const AtomGraph& graph) { ewald::check_periodic_cell(graph, "pme", "particle-mesh Ewald"); }

void check_mesh(const Params& params) {
  for (int d = 0; d < 3; ++d)
    if (params.mesh[d] < params.order)
      throw Error(model_error_id::system, "/parameters/accuracy",
                  "pme: the mesh derived for this box has " + std::to_string(params.mesh[d]) + " points along " +
                      "abc"[d] + ", fewer than the order " + std::to_string(params.order),
                  "ask for a smaller accuracy, a lower \"order\", or give \"mesh\"");
}

std::array<double, 9> cell_inv_t(const std::array<double, 9>& h) {
  // The cofactors of h over its determinant are (h^-1)^T.
  const double det = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                     h[2] * (h[3] * h[7] - h[4] * h[6]);
  if (det == 0.0) throw Error(model_error_id::system, "", "pme: the cell has zero volume", "check the box of the input");
  const double inv = 1.0 / det;
  return {(h[4] * h[8] - h[5] * h[7]) * inv, -(h[3] * h[8] - h[5] * h[6]) * inv, (h[3] * h[7] - h[4] * h[6]) * inv,
          -(h[1] * h[8] - h[2] * h[7]) * inv, (h[0] * h[8] - h[2] * h[6]) * inv,  -(h[0] * h[7] - h[1] * h[6]) * inv,
          (h[1] * h[5] - h[2] * h[4]) * inv,  -(h[0] * h[5] - h[2] * h[3]) * inv, (h[0] * h[4] - h[1] * h[3]) * inv};
}

void add_virial_share(const AtomGraph& graph, const OutputRequest& request, const std::array<double, 6>& virial,
                      double natoms, double coulomb_constant, ModelOutputs& out) {
  if (request.virial_rows && !out.rows_on_device()) {
    for (std::size_t i = 0; i < graph.n_owned; ++i)
      for (int c = 0; c < 6; ++c) out.virial[c] += out.virial_rows[6 * i + c];
    return;
  }
  if (natoms <= 0.0) return;
  double owned = 0.0;
  for (std::size_t i = 0; i < graph.n_owned; ++i)
    if (!graph.species || graph.species[i] >= 0) owned += 1.0;
  const double share = owned / natoms * coulomb_constant;
  for (int c = 0; c < 6; ++c) out.virial[c] += share * virial[c];
}

}  // namespace distspec::models::pme
