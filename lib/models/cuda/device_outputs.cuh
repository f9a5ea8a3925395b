// A model's outputs from the device into ModelOutputs, or left there for a device-resident host.
#pragma once

#include <cstddef>

#include "models/cuda/device_array.cuh"
#include "models/model.h"

namespace distspec::models::cuda {

// A pair-like model's outputs, from the device into `out`: the energy of the owned rows (a
// fixed-order sum), forces, and the virial (with `virial`) and per-row energy and virial where
// `request` asks for them. `energy` and `forces` hold `n_rows` rows. With
// request.rows_on_device only the energy and the virial are downloaded: the rows stay where
// they are and `out.device` points at them.
struct DeviceResultArrays {
  DeviceArray<double>& energy;
  DeviceArray<double>& forces;
  DeviceArray<double>& virial;
  DeviceArray<double>& virial_rows;
};
void download_outputs(const DeviceResultArrays& rows, std::size_t n_owned, std::size_t n_rows, const OutputRequest& request,
                      bool virial, DeviceArray<double>& scratch, DeviceArray<double>& total, ModelOutputs& out);

}  // namespace distspec::models::cuda
