#include "models/cuda/host_species_charges.cuh"

#include "distspec/halo/device_staging.h"  // is_device_pointer
#include "models/cuda/check.cuh"

namespace distspec::models::cuda {

const AtomGraph& HostSpeciesCharges::view(const AtomGraph& g) {
  const bool on_device = (g.charges && is_device_pointer(g.charges)) || (g.species && is_device_pointer(g.species));
  if (!on_device) return g;
  view_ = g;
  const std::size_t n = g.n_rows();
  if (g.species) {
    species_.resize(n);
    if (n) check(cudaMemcpy(species_.data(), g.species, n * sizeof(int), cudaMemcpyDefault), "cudaMemcpy (species)");
    view_.species = species_.data();
  }
  if (g.charges) {
    charges_.resize(n);
    if (n) check(cudaMemcpy(charges_.data(), g.charges, n * sizeof(double), cudaMemcpyDefault), "cudaMemcpy (charges)");
    view_.charges = charges_.data();
  }
  view_.positions = nullptr;
  return view_;
}

}  // namespace distspec::models::cuda
