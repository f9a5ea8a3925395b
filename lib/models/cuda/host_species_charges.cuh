// Species and charges where the host side of a CUDA model reads them (charge sums, neutrality,
// accuracy rules): a host that keeps its rows in GPU memory (distspec/kk under CUDA) gets one
// download of each per step, since charges may change every step; a host graph passes through.
#pragma once

#include <vector>

#include "models/model.h"

namespace distspec::models::cuda {

class HostSpeciesCharges {
 public:
  // `g` itself when its species and charges are host memory; else a view of it whose species
  // and charges are host copies and whose positions are null (read on the device only). Valid
  // until the next call.
  const AtomGraph& view(const AtomGraph& g);

 private:
  AtomGraph view_;
  std::vector<int> species_;
  std::vector<double> charges_;
};

}  // namespace distspec::models::cuda
