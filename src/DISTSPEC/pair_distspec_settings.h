/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the keywords of `pair_style distspec`.
------------------------------------------------------------------------- */

#ifndef LMP_PAIR_DISTSPEC_SETTINGS_H
#define LMP_PAIR_DISTSPEC_SETTINGS_H

#include <string>
#include <vector>

namespace LAMMPS_NS {

struct DistspecSettings {
  enum class Halo { per_layer, expanded };
  enum class Device { cpu, cuda };

  std::string spec_file;    // overrides the model file's spec when set
  Halo halo = Halo::per_layer;
  Device device = Device::cpu;
  std::string precision;    // fp32 | fp64 overrides the model file's; empty keeps it
  bool strict = false;    // unknown helper records become errors
  bool gpu_share = false;    // device cuda: let more ranks than GPUs share a node's GPUs (round-robin)
  bool timing = false;    // time the stages of compute() and print a breakdown at the end of each run
  int threads = 1;    // CPU threads of the model's kernels per MPI rank (OpenMP)

  // Parses the words after `pair_style distspec`; throws distspec::Error naming the keyword.
  static DistspecSettings parse(const std::vector<std::string> &words);
  static const char *name(Halo);
};

}    // namespace LAMMPS_NS

#endif
