// nvalchemi's halo ops for exported PyTorch graphs, answered by DISTSPEC's dispatcher.
//
// A graph exported from nvalchemi (doc/torch_models.md) calls these ops by name; the plugin
// registers them with torch's op registry once, with nvalchemi's exact schemas, and the same
// operations again under `distspec::`:
//
//   halo_forward_static(padded_in, send_index, recv_dest, recv_real, n_owned, world_size)
//       owned rows as they are, halo rows copied from their owners: Dispatcher::before_gather
//   halo_scatter_correct_static(...same...)
//       halo rows summed into their owners, then refreshed: Dispatcher::after_scatter
//   halo_forward_static_backward(grad_out, ...same routing...)
//       the adjoint of halo_forward_static: halo rows summed into their owners, then zero:
//       Dispatcher::before_gather_adjoint
//   per_system_reduce(local_vals, system_index, n_systems)
//       the owned rows summed per system, then over ranks: Dispatcher::all_reduce_sum
//   per_system_reduce_backward(grad_out, system_index)
//       its adjoint: grad_out summed over ranks, then gathered by system_index into the owned
//       rows (one row per entry of system_index), halo rows zero
//   halo_keepalive(x, si, rd, rr, no)
//       the identity on x
//
// Rows are [owned | halo] = LAMMPS' [nlocal | nghost]. The routing tensors are checked against
// the exchange's rows (sizes; n_owned where it is host memory: recv_dest has one entry per halo
// row, so the shapes fix n_owned = rows - n_halo without reading a device scalar), never used to
// route: the exchange follows the host's own communication pattern. On the GPU an exchange queues
// its kernels on torch's current stream, behind the graph's: on one rank a call waits for the
// host nowhere. Each op has an autograd kernel, so a TorchScript graph can take
// forces in C++: halo_forward_static's adjoint is halo_forward_static_backward (and back),
// the scatter-correction is its own adjoint, per_system_reduce's is per_system_reduce_backward
// (and back): an all-reduce of the gradient, then a gather by system (each rank differentiates
// its own energy).
//
// This header includes no torch header: C++17 code (the plugin entry) includes it.
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace distspec {
class Dispatcher;
}

namespace distspec::models::torch_kind {

// Registers the ops with torch (both namespaces, every backend, autograd). Idempotent; the
// registrations live until the process ends.
void register_halo_ops();

// The qualnames register_halo_ops() provides, sorted.
const std::vector<std::string>& halo_op_names();

// One collective a halo op made through the dispatcher: enough to make it again with nothing
// in it (replay_without_rows).
struct HaloCall {
  enum class Kind : unsigned char { forward, scatter_correct, forward_adjoint, all_reduce };
  Kind kind = Kind::forward;
  int width = 0;      // values per row, or values all-reduced
  bool fp32 = false;  // rows of float32 (else float64)
};

// Makes `calls` again, in order, on zero rows [0 owned | n_halo]: what a rank that owns no atom
// contributes to the collectives of a graph it need not run (its energy and forces are zero),
// so that every rank joins each of them.
void replay_without_rows(Dispatcher& dispatch, const std::vector<HaloCall>& calls);

// While one is alive, the ops exchange through `dispatch` (its attached halo exchange) and
// record the first error a kernel raised, which a graph runtime may otherwise reduce to
// "the call failed". Scopes nest: the previous one is restored at the end.
class ActiveDispatcher {
 public:
  explicit ActiveDispatcher(Dispatcher& dispatch);
  ~ActiveDispatcher();
  ActiveDispatcher(const ActiveDispatcher&) = delete;
  ActiveDispatcher& operator=(const ActiveDispatcher&) = delete;

  // The first error an op raised in this scope, or null when none did.
  std::exception_ptr kernel_error() const { return kernel_error_; }
  // Appends each collective the ops make in this scope to `calls` (nullptr: records nothing).
  void record(std::vector<HaloCall>* calls) { calls_ = calls; }

 private:
  friend struct ActiveAccess;
  Dispatcher* dispatch_;
  ActiveDispatcher* previous_;
  std::exception_ptr kernel_error_;
  std::vector<HaloCall>* calls_ = nullptr;
};

}  // namespace distspec::models::torch_kind
