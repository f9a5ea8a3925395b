/* ----------------------------------------------------------------------
   DISTSPEC: the end-of-run hook of pair_style distspec (LAMMPS without Pair::finish()).
------------------------------------------------------------------------- */

#include "fix_distspec_end_of_run.h"

#include "error.h"

using namespace LAMMPS_NS;

FixDistspecEndOfRun::FixDistspecEndOfRun(LAMMPS *lmp, int narg, char **arg) : Fix(lmp, narg, arg)
{
  if (narg != 3) error->all(FLERR, "fix {}: takes no arguments; pair_style distspec adds it itself", kStyle);
}

// Every rank runs post_run(): what it does is collective.
void FixDistspecEndOfRun::post_run()
{
  if (pair_) pair_->end_of_run();
}
