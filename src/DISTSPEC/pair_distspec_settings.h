/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the keywords of `pair_style distspec`.
------------------------------------------------------------------------- */

#ifndef LMP_PAIR_DISTSPEC_SETTINGS_H
#define LMP_PAIR_DISTSPEC_SETTINGS_H

#include "distspec/dispatch/dispatcher.h"
#include "distspec/ops/tensor_ref.h"

#include <string>
#include <vector>

namespace LAMMPS_NS {

// The keywords' values in the core's own types: `halo` as a distspec::HaloStrategy, `device`
// as the distspec::Device the model's kernels run on.
struct DistspecSettings {
  std::string spec_file;    // overrides the model file's spec when set
  distspec::HaloStrategy halo = distspec::HaloStrategy::per_layer;
  distspec::Device device = distspec::Device::cpu;
  std::string precision;    // fp32 | fp64 overrides the model file's; empty keeps it
  bool strict = false;    // unknown helper records become errors
  bool gpu_share = false;    // device cuda: let more ranks than GPUs share a node's GPUs (round-robin)
  bool timing = false;    // time the stages of compute() and print a breakdown at the end of each run
  int threads = 1;    // CPU threads of the model's kernels per MPI rank (OpenMP)

  // Parses the words after `pair_style distspec`; throws distspec::Error naming the keyword.
  static DistspecSettings parse(const std::vector<std::string> &words);
  static const char *name(distspec::HaloStrategy);
};

}    // namespace LAMMPS_NS

#endif
