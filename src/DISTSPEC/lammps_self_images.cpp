/* ----------------------------------------------------------------------
   DISTSPEC: one rank's halo rows as an index map, for rows in GPU memory.
------------------------------------------------------------------------- */

#include "lammps_self_images.h"

#include "atom.h"
#include "comm.h"
#include "lammps.h"

#include <utility>
#include <vector>

using namespace LAMMPS_NS;

bool LammpsSelfImages::current(std::size_t n_owned, std::size_t n_halo, std::uint64_t list_generation) const
{
  return list_generation == generation_ && n_owned == owned_ && n_halo == halo_;
}

distspec::HaloExchange *LammpsSelfImages::for_step(LAMMPS *lmp, std::size_t n_owned, std::size_t n_halo,
                                                   std::uint64_t list_generation)
{
  if (lmp->comm->nprocs != 1) return nullptr;
  Atom *atom = lmp->atom;
  if (atom->nlocal != static_cast<int>(n_owned) || atom->nghost != static_cast<int>(n_halo)) return nullptr;
  if (current(n_owned, n_halo, list_generation)) return map_.get();
  map_.reset();
  generation_ = list_generation;
  owned_ = n_owned;
  halo_ = n_halo;
  if (!atom->tag_enable || atom->map_style == Atom::MAP_NONE) return nullptr;
  std::vector<std::size_t> owner(n_halo);
  for (std::size_t h = 0; h < n_halo; ++h) {
    const int i = atom->map(atom->tag[n_owned + h]);
    if (i < 0 || i >= atom->nlocal) return nullptr;
    owner[h] = static_cast<std::size_t>(i);
  }
  map_ = std::make_unique<distspec::DeviceIndexedHaloExchange>(n_owned, std::move(owner));
  map_->set_stream(stream_);
  return map_.get();
}

void LammpsSelfImages::set_stream(void *stream)
{
  stream_ = stream;
  if (map_) map_->set_stream(stream);
}
