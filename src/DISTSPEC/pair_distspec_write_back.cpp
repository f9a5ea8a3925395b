/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec, the model's energy, forces and virial into LAMMPS.
------------------------------------------------------------------------- */

#include "pair_distspec.h"

#include "atom.h"


using namespace LAMMPS_NS;

// Energy, forces and virial into LAMMPS, as the run plan says of each output's halo rows.
void PairDistspec::write_back()
{
  using distspec::models::HaloRows;
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const std::size_t n_rows = nall;
  // The plan's one rule for an output's rows (run_plan.h rows_to_host): folded by the style's own
  // reverse exchange where it says, then its owned rows hold the output; every row is handed to
  // LAMMPS where it folds them (host_folds). Zeroed halo rows are never read.
  auto settle = [&](std::vector<double> &rows, int width, HaloRows halo_rows) {
    if (distspec::models::folded_by_style(halo_rows)) halo_->reverse(distspec::Rows<double>{rows.data(), n_rows, width});
  };

  if (eflag_global) eng_vdwl += model_outputs_.energy;

  double **f = atom->f;
  settle(model_outputs_.forces, 3, plan_.forces);
  const int force_rows = distspec::models::rows_to_host(plan_.forces, nlocal, nall);
  for (int i = 0; i < force_rows; ++i)
    for (int c = 0; c < 3; ++c) f[i][c] += model_outputs_.forces[3 * i + c];

  if (eflag_atom) {
    settle(model_outputs_.energy_rows, 1, plan_.energy_rows);
    for (int i = 0; i < nlocal; ++i) eatom[i] += model_outputs_.energy_rows[i];
  }
  if (vflag_global)
    for (int k = 0; k < 6; ++k) virial[k] += model_outputs_.virial[k];
  if (vflag_atom) {
    settle(model_outputs_.virial_rows, 6, plan_.virial_rows);
    for (int i = 0; i < nlocal; ++i)
      for (int k = 0; k < 6; ++k) vatom[i][k] += model_outputs_.virial_rows[6 * i + k];
  }
}
