// The keywords of `pair_style distspec` (spec, halo, device, precision, strict, gpu_share, timing,
// threads, edges, cuda_graph) as the core's own types: parsed without LAMMPS, so that both pair styles and a test
// read them alike.
#pragma once

#include <string>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/ops/tensor_ref.h"

namespace distspec::models {

// `halo` as a distspec::HaloStrategy, `device` as the distspec::Device the model's kernels run on.
struct StyleSettings {
  std::string spec_file;    // overrides the model file's spec when set
  HaloStrategy halo = HaloStrategy::per_layer;
  Device device = Device::cpu;
  std::string precision;    // fp32 | fp64 overrides the model file's; empty keeps it
  bool strict = false;      // unknown helper records become errors
  bool gpu_share = false;   // device cuda: let more ranks than GPUs share a node's GPUs (round-robin)
  bool timing = false;      // time the stages of compute() and print a breakdown at the end of each run
  int threads = 1;          // CPU threads of the model's kernels per MPI rank (OpenMP)
  // The edges an exported torch graph gets: "cutoff" (the pairs within its cutoff, filtered at
  // every step) or "skin" (every pair of the neighbour list, kept from one build to the next; for
  // a graph whose energy ignores pairs beyond its cutoff). Other models take the whole list.
  std::string edges = "cutoff";
  // An exported graph on the GPU on one rank: the step captured in a CUDA graph at each
  // neighbour-list build and replayed until the next (needs edges skin: fixed shapes).
  bool cuda_graph = false;

  // Parses the words after `pair_style distspec`; throws distspec::Error (id input.keyword)
  // naming the keyword, what it got and what it takes.
  static StyleSettings parse(const std::vector<std::string>& words);
  static const char* name(HaloStrategy);
};

}  // namespace distspec::models
