/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the end-of-run hook of pair_style distspec in LAMMPS versions whose Finish calls no
   Pair::finish() (29 Sep 2021; lammps_compat.h). pair_style distspec adds this fix itself (fix ID
   DISTSPEC_END_OF_RUN_<n>, style DISTSPEC_END_OF_RUN); its post_run() asks the pair style to end
   its run: settle the non-finite output check still pending, print the timing breakdown of
   `timing yes`. It is not meant for input scripts.
------------------------------------------------------------------------- */

#ifndef LMP_FIX_DISTSPEC_END_OF_RUN_H
#define LMP_FIX_DISTSPEC_END_OF_RUN_H

#include "fix.h"
#include "pair_with_end_of_run.h"

namespace LAMMPS_NS {

class FixDistspecEndOfRun : public Fix {
 public:
  static constexpr const char *kStyle = "DISTSPEC_END_OF_RUN";

  FixDistspecEndOfRun(class LAMMPS *, int, char **);
  int setmask() override { return 0; }    // Modify calls post_run() of every fix
  void post_run() override;

  void attach(PairWithEndOfRun *pair) { pair_ = pair; }

 private:
  PairWithEndOfRun *pair_ = nullptr;
};

}    // namespace LAMMPS_NS

#endif
