/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: LAMMPS' neighbour-list builds as a pair style sees them.
   neighbor->ncalls counts no builds: Verlet::setup and setup_minimal, Min::setup and Respa
   reset it to 0 right after they build, so a rerun frame, a second minimize, PRD's and TAD's
   dephasing and quenches, or a second run whose first made no rebuild all leave it where the
   previous build left it. neighbor->ago is 0 from a build until the next step's decide(), which
   every integrator and minimizer calls before building; the INTEL package reads it the same
   way. A build is assumed wherever either says so: a spurious rebuild costs time, a missed one
   gives wrong forces.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_NEIGHBOR_BUILDS_H
#define LMP_DISTSPEC_NEIGHBOR_BUILDS_H

#include "neighbor.h"

#include <cstdint>

namespace LAMMPS_NS {

class NeighborBuilds {
 public:
  // Once per force computation: whether LAMMPS may have built its lists since the last one.
  // Advances generation() where it did.
  bool rebuilt(const Neighbor &neighbor)
  {
    const bool built = forget_ || neighbor.ago == 0 || neighbor.ncalls != ncalls_seen_;
    forget_ = false;
    ncalls_seen_ = neighbor.ncalls;
    if (built) ++generation_;
    return built;
  }
  // Forget every build seen (a new run's init): the next computation rebuilds.
  void reset() { forget_ = true; }
  // Numbers the builds seen (from 1, never repeating): what was derived from the lists is current
  // while it holds.
  std::uint64_t generation() const { return generation_; }

 private:
  std::uint64_t generation_ = 0;
  bigint ncalls_seen_ = -1;
  bool forget_ = true;
};

}    // namespace LAMMPS_NS

#endif
