// IndexedHaloExchange on the GPU: the same index map (halo row h copies owned row
// halo_owner[h]: periodic images of one's own atoms), applied by CUDA kernels to rows in device
// memory, so that a one-GPU run keeps its feature exchanges on the device. Reverse sums every
// owner's row and its images in the host exchange's order (the row, then its images by halo
// index; fp32 in fp64), so both give the same bits. Rows in host memory go to an
// IndexedHaloExchange of the same map. Its kernels go on the stream set_stream names (the
// model's), so that a step of one GPU exchanges without waiting on the host.
//
// Built only with DISTSPEC_ENABLE_CUDA (a CUDA source of distspec_core).
#pragma once

#include <cstddef>
#include <vector>

#include "distspec/halo/indexed_halo_exchange.h"

namespace distspec {

class DeviceIndexedHaloExchange final : public HaloExchange {
 public:
  DeviceIndexedHaloExchange(std::size_t n_owned, std::vector<std::size_t> halo_owner);
  ~DeviceIndexedHaloExchange() override;
  DeviceIndexedHaloExchange(const DeviceIndexedHaloExchange&) = delete;
  DeviceIndexedHaloExchange& operator=(const DeviceIndexedHaloExchange&) = delete;

  std::size_t n_owned() const override { return host_.n_owned(); }
  std::size_t n_halo() const override { return host_.n_halo(); }
  int n_ranks() const override { return 1; }
  bool accepts_device_rows() const override { return true; }

  void forward(Rows<double> rows) override { forward_impl(rows); }
  void forward(Rows<float> rows) override { forward_impl(rows); }
  void reverse(Rows<double> rows) override { reverse_impl(rows); }
  void reverse(Rows<float> rows) override { reverse_impl(rows); }
  void all_reduce_sum(double*, std::size_t) override {}
  void set_stream(void* stream) override { stream_ = stream; }

 private:
  template <class T> void forward_impl(Rows<T> rows);
  template <class T> void reverse_impl(Rows<T> rows);

  IndexedHaloExchange host_;
  int* owner_ = nullptr;          // per halo row: its owner (device)
  int* image_offsets_ = nullptr;  // n_owned + 1: owned row i's images are images_[image_offsets_[i] ..)
  int* images_ = nullptr;         // halo rows (0-based halo index), by owner, ascending within one
  void* stream_ = nullptr;        // cudaStream_t of the model's work; nullptr: the legacy default stream
};

}  // namespace distspec
