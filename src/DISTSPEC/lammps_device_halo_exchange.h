/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the LAMMPS halo exchange of a CUDA model (pair_style distspec device cuda).
   The model's rows stay in GPU memory: the comm callbacks pack and unpack the listed rows with
   CUDA kernels (distspec::DeviceRowPacker), so only the rows LAMMPS sends cross PCIe. On one
   rank every halo row is a periodic image of an owned atom, and LAMMPS' swaps reduce to an
   index map (atom->map of each ghost's ID), applied on the GPU (DeviceIndexedHaloExchange):
   no row leaves the device. On more ranks, the swaps a rank makes with itself (the periodic
   images along an axis the processor grid does not divide) are copied in place on the GPU, and
   only the rows of swaps with other ranks cross PCIe. Every kernel and copy is queued on the
   model's stream (set_stream): one rank's exchanges, and the self-swaps of more, make the host
   wait for nothing; only rows that MPI sends wait for the stream. Blocks in host memory (the
   style's own per-atom folds) go the host way. Built with CUDA only.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_DEVICE_HALO_EXCHANGE_H
#define LMP_DISTSPEC_LAMMPS_DEVICE_HALO_EXCHANGE_H

#include "lammps_halo_exchange.h"
#include "lammps_self_images.h"

#include "distspec/halo/device_row_packer.h"

namespace LAMMPS_NS {

class LammpsDeviceHaloExchange final : public LammpsHaloExchange {
 public:
  using LammpsHaloExchange::LammpsHaloExchange;

  bool accepts_device_rows() const override { return true; }
  void wait_for_device() override;
  // The model's stream: the index map's kernels and the packer's copies and kernels go there.
  void set_stream(void *stream) override;

  void forward(distspec::Rows<double> rows) override;
  void reverse(distspec::Rows<double> rows) override;
  void forward(distspec::Rows<float> rows) override;
  void reverse(distspec::Rows<float> rows) override;
  void all_reduce_sum(double *values, std::size_t n) override;

  int pack_forward(int n, const int *list, double *buf) override;
  void unpack_forward(int n, int first, const double *buf) override;
  int pack_reverse(int n, int first, double *buf) override;
  void unpack_reverse(int n, const int *list, const double *buf) override;

 protected:
  void bind(const distspec::Rows<double> &rows) override;
  void zero_halo_rows(const distspec::Rows<double> &rows) override;

 private:
  // The one-rank exchange of a device block, or nullptr where LAMMPS' comm must move it.
  distspec::HaloExchange *self_images(const void *block);

  bool block_on_device_ = false;
  distspec::DeviceRowPacker packer_;
  LammpsSelfImages images_;
};

}    // namespace LAMMPS_NS

#endif
