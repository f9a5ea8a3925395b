/* ----------------------------------------------------------------------
   DISTSPEC: PairWithEndOfRun's fix, added where LAMMPS' Finish calls no Pair::finish().
------------------------------------------------------------------------- */

#include "pair_with_end_of_run.h"

#include "fix_distspec_end_of_run.h"
#include "modify.h"

using namespace LAMMPS_NS;

PairWithEndOfRun::~PairWithEndOfRun()
{
  const std::string hook = fmt::format("{}_{}", FixDistspecEndOfRun::kStyle, instance_me);
  if (!distspec_compat::kPairHasFinish && modify && modify->find_fix(hook) >= 0) modify->delete_fix(hook);
}

void PairWithEndOfRun::install_end_of_run_hook()
{
  if (distspec_compat::kPairHasFinish) return;
  const std::string id = fmt::format("{}_{}", FixDistspecEndOfRun::kStyle, instance_me);
  if (modify->find_fix(id) < 0) modify->add_fix(fmt::format("{} all {}", id, FixDistspecEndOfRun::kStyle));
  static_cast<FixDistspecEndOfRun *>(modify->fix[modify->find_fix(id)])->attach(this);
}
