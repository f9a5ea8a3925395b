/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: one rank's halo rows as an index map, for rows in GPU memory.
   On one rank every ghost is a periodic image of an owned atom (atom->map of its ID), so
   LAMMPS' swaps reduce to the map halo row -> owned row, which DeviceIndexedHaloExchange applies
   with CUDA kernels on the model's stream: no row leaves the device and the host waits for
   nothing. The map is made once per neighbour-list build (ghosts, their IDs and the map change
   only then). Shared by the plain style's device exchange and distspec/kk's. Built with CUDA only.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_SELF_IMAGES_H
#define LMP_DISTSPEC_LAMMPS_SELF_IMAGES_H

#include "distspec/halo/device_indexed_halo_exchange.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace LAMMPS_NS {

class LAMMPS;

class LammpsSelfImages {
 public:
  // The index map of this step's rows (n_owned atoms, n_halo ghosts of build `list_generation`),
  // or nullptr where LAMMPS' comm must move them: more ranks, atoms without IDs or map, a ghost
  // whose owner is not local. Host IDs and map are read at a new build only.
  distspec::HaloExchange *for_step(LAMMPS *lmp, std::size_t n_owned, std::size_t n_halo, std::uint64_t list_generation);
  // Whether for_step() has decided for these rows already (and said yes): then it reads nothing.
  bool current(std::size_t n_owned, std::size_t n_halo, std::uint64_t list_generation) const;
  bool active(std::size_t n_owned, std::size_t n_halo, std::uint64_t list_generation) const
  {
    return map_ && current(n_owned, n_halo, list_generation);
  }
  // The model's stream (cudaStream_t), which the map's kernels use.
  void set_stream(void *stream);

 private:
  std::unique_ptr<distspec::DeviceIndexedHaloExchange> map_;
  std::uint64_t generation_ = 0;    // the list build and row counts map_ (or its absence) was decided for
  std::size_t owned_ = 0, halo_ = 0;
  void *stream_ = nullptr;
};

}    // namespace LAMMPS_NS

#endif
