// The device side of a host communicator that names rows by index lists, as LAMMPS' comm does
// in a pair style's pack/unpack callbacks: rows stay in GPU memory, and only the listed rows
// cross PCIe, packed and unpacked by CUDA kernels. A halo exchange built on it moves the halo
// rows of each exchange and nothing else (DeviceStagingHaloExchange, by contrast, copies the
// whole block both ways).
//
// Host buffers are the communicator's (pageable); lists are uploaded with each call, since a
// list is one int per row against `width` doubles of payload and changes at every
// reneighbouring. Every copy and kernel runs on the legacy default stream, in order with the
// models' kernels.
//
// Built only with DISTSPEC_ENABLE_CUDA (a CUDA source of distspec_core).
#pragma once

#include <cstddef>

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

  // Waits for the device's queued work.
  static void synchronize();
  // `bytes` from `from` to `to`, each host or device memory.
  static void copy(void* to, const void* from, std::size_t bytes);

 private:
  template <class T> T* grow(T*& data, std::size_t& capacity, std::size_t n);
  const int* upload(const int* list, int n);  // the host list in list_
  int* list_ = nullptr;
  std::size_t list_capacity_ = 0;
  double* message_ = nullptr;
  std::size_t message_capacity_ = 0;
  double* wide_ = nullptr;
  std::size_t wide_capacity_ = 0;
};

}  // namespace distspec
