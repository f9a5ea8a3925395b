// The device side of a host communicator that names rows by index lists, as LAMMPS' comm does
// in a pair style's pack/unpack callbacks: rows stay in GPU memory, and only the listed rows
// cross PCIe, packed and unpacked by CUDA kernels. A halo exchange built on it moves the halo
// rows of each exchange and nothing else (DeviceStagingHaloExchange, by contrast, copies the
// whole block both ways).
//
// Host buffers are the communicator's (pageable). A send list is uploaded once per neighbour-list
// build (keep_lists_for): LAMMPS keeps each swap's list, at the same address, until it
// reneighbours, and an upload from pageable memory waits for the stream. Every copy and kernel
// runs on the model's stream (set_stream), in order with its kernels: a swap of a rank with itself
// then needs no host wait, and only the rows the host reads or sends wait for the stream.
//
// Built only with DISTSPEC_ENABLE_CUDA (a CUDA source of distspec_core).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace distspec {

class DeviceRowPacker {
 public:
  DeviceRowPacker() = default;
  ~DeviceRowPacker();
  DeviceRowPacker(const DeviceRowPacker&) = delete;
  DeviceRowPacker& operator=(const DeviceRowPacker&) = delete;

  // buf[i] = rows[list[i]], i < n; rows of `width` doubles in device memory, buf and list on the host.
  void pack(const double* rows, int width, const int* list, int n, double* buf);
  // rows[first + i] = buf[i].
  void unpack(const double* buf, int n, int first, int width, double* rows);
  // buf[i] = rows[first + i].
  void pack_range(const double* rows, int first, int n, int width, double* buf);
  // rows[list[i]] += buf[i] (a list names a row once).
  void unpack_add(const double* buf, const int* list, int n, int width, double* rows);
  // A swap of a rank with itself, in place on the device (only the list goes up): forward
  // rows[first + i] = rows[list[i]]; reverse rows[list[i]] += rows[first + i]. The listed rows
  // come before `first` (owned rows, or ghosts of an earlier swap), so the two never overlap.
  void copy_rows(double* rows, int width, const int* list, int n, int first);
  void add_rows_back(double* rows, int width, const int* list, int n, int first);
  // rows[begin .. end) = 0.
  void zero(double* rows, std::size_t begin, std::size_t end, int width);

  // fp32 blocks travel as fp64, so that reverse sums accumulate in fp64 and round once: widen()
  // copies `n` floats into a device fp64 block it keeps (and returns), narrow() copies it back.
  double* widen(const float* rows, std::size_t n);
  void narrow(float* rows, std::size_t n);

  // The stream of the model's work (a cudaStream_t; nullptr: the legacy default stream).
  void set_stream(void* stream) { stream_ = stream; }
  // The send lists uploaded so far hold while `list_generation` (the neighbour-list build the
  // host's lists come from) does; another generation drops them.
  void keep_lists_for(std::uint64_t list_generation);
  // Waits for the work queued on the stream.
  void synchronize();
  // `bytes` from `from` to `to`, each host or device memory, in stream order; returns when done.
  void copy(void* to, const void* from, std::size_t bytes);

 private:
  template <class T> T* grow(T*& data, std::size_t& capacity, std::size_t n);
  const int* upload(const int* list, int n);  // the host list on the device, uploaded once per generation
  void drop_lists();
  void* stream_ = nullptr;
  std::map<std::pair<const int*, int>, int*> lists_;  // host list (address, length) -> its device copy
  std::uint64_t lists_generation_ = 0;
  double* message_ = nullptr;
  std::size_t message_capacity_ = 0;
  double* wide_ = nullptr;
  std::size_t wide_capacity_ = 0;
};

}  // namespace distspec
