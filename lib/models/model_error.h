// Stable error ids of the model layer (the core's are spec.*, dispatch): callers may branch on
// them and tests pin them.
#pragma once

namespace distspec::models::model_error_id {

inline constexpr char type[] = "model.type";                // a value has the wrong JSON type
inline constexpr char missing_key[] = "model.missing_key";  // a required key is absent
inline constexpr char unknown_key[] = "model.unknown_key";  // a key the format does not define
inline constexpr char value[] = "model.value";              // right type, unacceptable value
inline constexpr char io[] = "model.io";                    // a referenced file cannot be read
inline constexpr char table[] = "model.table";              // a LAMMPS potential file is malformed
inline constexpr char potential_file[] = "model.potential_file";  // a LAMMPS potential file where a model file belongs
inline constexpr char not_model_file[] = "model.not_model_file";  // another kind of file where a model file belongs
inline constexpr char op_args[] = "model.op_args";          // an op got arguments of the wrong shape
inline constexpr char device[] = "model.device";            // no CUDA build or device, or a CUDA call failed
inline constexpr char accelerator[] = "model.accelerator";  // a graph calls kernels this build cannot load
// The system cannot run under the model (its cell, its net charge). Raised only from quantities
// every rank shares (the box, an all-reduced sum), so every rank raises it together and a host
// may stop them collectively.
inline constexpr char system[] = "model.system";

}  // namespace distspec::models::model_error_id
