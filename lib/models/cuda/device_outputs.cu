// A model's outputs from the device.
#include "models/cuda/device_outputs.cuh"
#include "models/cuda/reductions.cuh"

namespace distspec::models::cuda {

void download_outputs(const DeviceResultArrays& rows, std::size_t n_owned, std::size_t n_rows, const OutputRequest& request,
                      bool virial, DeviceArray<double>& scratch, DeviceArray<double>& total, ModelOutputs& out) {
  if (virial) rows.virial.download(out.virial.data(), 6);
  out.energy = device_sum(rows.energy.data(), n_owned, scratch, total);
  if (request.rows_on_device) {
    out.device.forces = rows.forces.data();
    out.device.energy_rows = request.energy_rows ? rows.energy.data() : nullptr;
    out.device.virial_rows = request.virial_rows ? rows.virial_rows.data() : nullptr;
    return;
  }
  if (request.energy_rows) rows.energy.download(out.energy_rows.data(), n_rows);
  rows.forces.download(out.forces.data(), 3 * n_rows);
  if (request.virial_rows) rows.virial_rows.download(out.virial_rows.data(), 6 * n_rows);
}

}  // namespace distspec::models::cuda
