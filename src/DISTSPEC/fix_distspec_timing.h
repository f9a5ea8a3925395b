/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the end-of-run hook of `pair_style distspec ... timing yes` in LAMMPS versions whose
   Finish calls no Pair::finish() (29 Sep 2021). pair_style distspec adds this fix itself
   (fix ID DISTSPEC_TIMING_<n>, style DISTSPEC_TIMING); its post_run() asks the pair style to
   print its timing breakdown. It is not meant for input scripts.
------------------------------------------------------------------------- */

#ifndef LMP_FIX_DISTSPEC_TIMING_H
#define LMP_FIX_DISTSPEC_TIMING_H

#include "fix.h"

namespace LAMMPS_NS {

class PairDistspec;

class FixDistspecTiming : public Fix {
 public:
  static constexpr const char *kStyle = "DISTSPEC_TIMING";

  FixDistspecTiming(class LAMMPS *, int, char **);
  int setmask() override { return 0; }    // Modify calls post_run() of every fix
  void post_run() override;

  void attach(PairDistspec *pair) { pair_ = pair; }

 private:
  PairDistspec *pair_ = nullptr;
};

}    // namespace LAMMPS_NS

#endif
