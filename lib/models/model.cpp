#include "models/model.h"

#include <algorithm>

namespace distspec::models {

void ModelOutputs::reset(std::size_t n_rows, const OutputRequest& request) {
  energy = 0.0;
  virial.fill(0.0);
  forces.assign(n_rows * 3, 0.0);
  energy_rows.assign(request.energy_rows ? n_rows : 0, 0.0);
  virial_rows.assign(request.virial_rows ? n_rows * 6 : 0, 0.0);
}

}  // namespace distspec::models
