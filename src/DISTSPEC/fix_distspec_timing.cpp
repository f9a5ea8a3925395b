/* ----------------------------------------------------------------------
   DISTSPEC: end-of-run hook for the timing breakdown (LAMMPS without Pair::finish()).
------------------------------------------------------------------------- */

#include "fix_distspec_timing.h"

#include "error.h"
#include "pair_distspec.h"

using namespace LAMMPS_NS;

FixDistspecTiming::FixDistspecTiming(LAMMPS *lmp, int narg, char **arg) : Fix(lmp, narg, arg)
{
  if (narg != 3)
    error->all(FLERR, "fix {}: takes no arguments; pair_style distspec ... timing yes adds it itself", kStyle);
}

// Every rank runs post_run(): the report is collective.
void FixDistspecTiming::post_run()
{
  if (pair_) pair_->report_timing();
}
