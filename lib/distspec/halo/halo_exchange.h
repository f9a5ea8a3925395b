// The abstract halo exchange the core drives. Storage is [owned | halo] rows: halo row h is a
// copy of some owner's row (on this or another rank, possibly a periodic image of an owned row).
// An implementation (LAMMPS comm in src/DISTSPEC, an index map in tests) supplies the three
// collectives; every rank must call each one, in the same order, even with zero rows.
#pragma once

#include <cstddef>

#include "distspec/halo/rows.h"

namespace distspec {

class HaloExchange {
 public:
  virtual ~HaloExchange() = default;

  virtual std::size_t n_owned() const = 0;
  virtual std::size_t n_halo() const = 0;
  virtual int n_ranks() const = 0;

  // forward: every halo row becomes a copy of its owner's row.
  virtual void forward(Rows<double> rows) = 0;
  virtual void forward(Rows<float> rows) = 0;
  // reverse: halo rows are summed into their owners' rows (fp32 sums in fp64), then zeroed.
  virtual void reverse(Rows<double> rows) = 0;
  virtual void reverse(Rows<float> rows) = 0;
  // all-reduce: element-wise sum over ranks, result on every rank.
  virtual void all_reduce_sum(double* values, std::size_t n) = 0;

  // Whether forward/reverse take rows in device (CUDA) memory. A host exchange does not: a
  // device model then wraps it in a DeviceStagingHaloExchange (device_staging.h).
  virtual bool accepts_device_rows() const { return false; }

  // Waits for work still queued on the rows (a device model's kernels run asynchronously), so
  // that the time of the exchange that follows is the exchange's own. Host exchanges have none;
  // an exchange whose device work is queued behind the model's (set_stream) need not wait.
  virtual void wait_for_device() {}

  // The CUDA stream (a cudaStream_t; nullptr: the legacy default stream) on which a device model
  // queues the work that writes the rows before an exchange and reads them after it. An exchange
  // that queues its own device work on that stream stays in order with the model without a host
  // wait; one that runs elsewhere orders itself after it (an event) and the model after itself.
  // Host exchanges ignore it.
  virtual void set_stream(void* stream) { (void)stream; }

  std::size_t n_rows() const { return n_owned() + n_halo(); }
};

}  // namespace distspec
