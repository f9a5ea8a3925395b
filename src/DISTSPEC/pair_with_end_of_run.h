/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: a pair style whose end_of_run() runs at the end of every run, on every rank, whatever
   the LAMMPS version: from Pair::finish() (lammps_compat.h), or from the post_run() of the fix
   install_end_of_run_hook() adds where Finish calls no Pair::finish() (29 Sep 2021).
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_PAIR_WITH_END_OF_RUN_H
#define LMP_DISTSPEC_PAIR_WITH_END_OF_RUN_H

#include "lammps_compat.h"

namespace LAMMPS_NS {

class PairWithEndOfRun : public distspec_compat::PairFinish {
 public:
  using PairFinish::PairFinish;
  ~PairWithEndOfRun() override;

 protected:
  // From init_style(): where Finish calls no Pair::finish(), adds the fix (once per style
  // instance; the destructor removes it). Elsewhere nothing.
  void install_end_of_run_hook();
};

}    // namespace LAMMPS_NS

#endif
