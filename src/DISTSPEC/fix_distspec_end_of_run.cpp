/* ----------------------------------------------------------------------
   DISTSPEC: the end-of-run hook of pair_style distspec (LAMMPS without Pair::finish()), and
   PairWithEndOfRun's installation of it (lammps_compat.h).
------------------------------------------------------------------------- */

#include "fix_distspec_end_of_run.h"

#include "error.h"
#include "modify.h"

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

distspec_compat::PairWithEndOfRun::~PairWithEndOfRun()
{
  const std::string hook = fmt::format("{}_{}", FixDistspecEndOfRun::kStyle, instance_me);
  if (!kPairHasFinish && modify && modify->find_fix(hook) >= 0) modify->delete_fix(hook);
}

void distspec_compat::PairWithEndOfRun::install_end_of_run_hook()
{
  if (kPairHasFinish) return;
  const std::string id = fmt::format("{}_{}", FixDistspecEndOfRun::kStyle, instance_me);
  if (modify->find_fix(id) < 0) modify->add_fix(fmt::format("{} all {}", id, FixDistspecEndOfRun::kStyle));
  static_cast<FixDistspecEndOfRun *>(modify->fix[modify->find_fix(id)])->attach(this);
}
