#include "models/model.h"

#include <algorithm>

#include "distspec/error.h"
#include "models/model_error.h"

namespace distspec::models {

const char* edge_list_name(EdgeList list) {
  switch (list) {
    case EdgeList::full: return "full";
    case EdgeList::half_newton_off: return "half (newton off)";
    case EdgeList::half_newton_on: return "half (newton on)";
  }
  return "?";
}

void ModelOutputs::reset(std::size_t n_rows, const OutputRequest& request, bool rows_on_device) {
  energy = 0.0;
  virial.fill(0.0);
  device = DeviceOutputRows{};
  if (rows_on_device) n_rows = 0;
  forces.assign(n_rows * 3, 0.0);
  energy_rows.assign(request.energy_rows ? n_rows : 0, 0.0);
  virial_rows.assign(request.virial_rows ? n_rows * 6 : 0, 0.0);
}

AtomGraph csr_graph(std::size_t n_owned, std::size_t n_halo, const double* positions, const int* species,
                    const std::vector<int>& receivers, const std::vector<int>& offsets, const std::vector<int>& senders) {
  AtomGraph g;
  g.n_owned = n_owned;
  g.n_halo = n_halo;
  g.positions = positions;
  g.species = species;
  g.n_receivers = receivers.size();
  g.receivers = receivers.data();
  g.offsets = offsets.data();
  g.senders = senders.data();
  return g;
}

void throw_no_cuda(const std::string& architecture) {
  throw Error(model_error_id::device, "", "architecture '" + architecture + "' was asked for on cuda, but this build has no CUDA",
              "configure with -DDISTSPEC_ENABLE_CUDA=ON (needs nvcc), or run on the cpu");
}

}  // namespace distspec::models
