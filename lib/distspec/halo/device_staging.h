// A halo exchange for rows in CUDA device memory, built on a host exchange: each call copies
// device rows into a pinned host buffer, runs the wrapped exchange there, and copies back what
// changed. Forward: owned rows down, halo rows up. Reverse: every row down, owned rows up, halo
// rows zeroed on the device. Rows already in host memory go straight to the wrapped exchange,
// so one decorator serves host and device models alike.
//
// This is the simple way to a GPU model under any host communicator (LAMMPS comm, MPI, the
// single-process IndexedHaloExchange); it costs two PCIe copies of the block per exchange. A
// communicator that packs on the device (CUDA-aware MPI, KOKKOS comm) would implement
// HaloExchange itself and answer accepts_device_rows() with true, as the single-process
// DeviceIndexedHaloExchange (device_indexed_halo_exchange.h) does.
//
// Built only with DISTSPEC_ENABLE_CUDA (device_staging.cpp calls the CUDA runtime).
#pragma once

#include <cstddef>

#include "distspec/halo/halo_exchange.h"

namespace distspec {

class DeviceStagingHaloExchange final : public HaloExchange {
 public:
  explicit DeviceStagingHaloExchange(HaloExchange* inner = nullptr) : inner_(inner) {}
  ~DeviceStagingHaloExchange() override;
  DeviceStagingHaloExchange(const DeviceStagingHaloExchange&) = delete;
  DeviceStagingHaloExchange& operator=(const DeviceStagingHaloExchange&) = delete;

  // The host exchange to run (the host's may change every step; the pinned buffer stays).
  void wrap(HaloExchange& inner) { inner_ = &inner; }
  HaloExchange* inner() const { return inner_; }

  std::size_t n_owned() const override { return host().n_owned(); }
  std::size_t n_halo() const override { return host().n_halo(); }
  int n_ranks() const override { return host().n_ranks(); }
  bool accepts_device_rows() const override { return true; }

  void forward(Rows<double> rows) override { exchange(rows, false); }
  void forward(Rows<float> rows) override { exchange(rows, false); }
  void reverse(Rows<double> rows) override { exchange(rows, true); }
  void reverse(Rows<float> rows) override { exchange(rows, true); }
  // `values` may be host or device memory.
  void all_reduce_sum(double* values, std::size_t n) override;
  // The device's queued kernels: the staging copies would wait for them anyway.
  void wait_for_device() override;

 private:
  HaloExchange& host() const;
  template <class T> void exchange(Rows<T> rows, bool reverse);
  void* pinned(std::size_t bytes);  // the staging buffer, grown (with padding) to `bytes`

  HaloExchange* inner_ = nullptr;
  void* buffer_ = nullptr;  // cudaMallocHost; freed by the destructor
  std::size_t capacity_ = 0;
};

// Whether `p` points into CUDA device (or managed) memory; false for host memory and nullptr.
bool is_device_pointer(const void* p);

}  // namespace distspec
