#include "distspec/tensor/tape.h"

namespace distspec::tensor {

void Tape::backward() {
  // Taken out first, so the tape is empty afterwards even when an adjoint throws (a failed halo
  // exchange), and closures that record nothing cannot grow the list under the loop.
  std::vector<Backward> steps = std::move(steps_);
  steps_.clear();
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) (*it)();
}

}  // namespace distspec::tensor
