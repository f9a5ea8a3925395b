/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: make the core's errors collective.
   Core code throws distspec::Error on whichever rank sees the problem; LAMMPS needs every rank
   to call error->all() together. run_collectively() runs a step on every rank, agrees on the
   outcome with one all-reduce, and if any rank failed, every rank stops with the message of the
   lowest failing rank. Nothing hangs waiting in a collective the failed rank never entered.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_COLLECTIVE_H
#define LMP_DISTSPEC_COLLECTIVE_H

#include <functional>
#include <string>

namespace LAMMPS_NS {

class LAMMPS;

// Runs `step`; on failure anywhere calls error->all("<context>: <message>") on every rank,
// located at the caller's FLERR (the command that failed, not this helper).
void run_collectively(LAMMPS *lmp, const char *file, int line, const std::string &context,
                      const std::function<void()> &step);

// Reads a whole file on rank 0 and broadcasts its bytes; throws distspec::Error naming the file
// on every rank when rank 0 cannot read it. Call it inside run_collectively().
std::string read_file_on_rank0(LAMMPS *lmp, const std::string &path);

// Where this rank finds `path` the way LAMMPS finds potential files (the path, else its file
// name in the folder LAMMPS_POTENTIALS names); `path` itself where neither exists, so that
// reading it names what the input script gave. Each rank looks for itself: the files a model
// file names are read on every rank, and the ranks' agreement on them is checked afterwards.
std::string find_potential_file(const std::string &path);

}    // namespace LAMMPS_NS

#endif
