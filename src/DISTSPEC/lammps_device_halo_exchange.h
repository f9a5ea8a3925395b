/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the LAMMPS halo exchange of a CUDA model (pair_style distspec device cuda).
   The model's rows stay in GPU memory: the comm callbacks pack and unpack the listed rows with
   CUDA kernels (distspec::DeviceRowPacker), so only the rows LAMMPS sends cross PCIe. On one
   rank every halo row is a periodic image of an owned atom, and LAMMPS' swaps reduce to an
   index map (atom->map of each ghost's ID), applied on the GPU (DeviceIndexedHaloExchange):
   no row leaves the device. On more ranks, the swaps a rank makes with itself (the periodic
   images along an axis the processor grid does not divide) are copied in place on the GPU, and
   only the rows of swaps with other ranks cross PCIe. Blocks in host memory (the style's own
   per-atom folds) go the host way. Built with CUDA only.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_DEVICE_HALO_EXCHANGE_H
#define LMP_DISTSPEC_LAMMPS_DEVICE_HALO_EXCHANGE_H

#include "lammps_halo_exchange.h"

#include "distspec/halo/device_indexed_halo_exchange.h"
#include "distspec/halo/device_row_packer.h"

#include <memory>

namespace LAMMPS_NS {

class LammpsDeviceHaloExchange final : public LammpsHaloExchange {
 public:
  using LammpsHaloExchange::LammpsHaloExchange;

  bool accepts_device_rows() const override { return true; }
  void wait_for_device() override;

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
  // The one-rank exchange of a device block, or nullptr where LAMMPS' comm must move it (more
  // ranks, atoms without IDs or map, a halo row whose owner is not local).
  distspec::HaloExchange *self_images(const void *block);
  bool images_current() const;    // images_ (or its absence) was decided for this list build

  bool block_on_device_ = false;
  distspec::DeviceRowPacker packer_;
  std::unique_ptr<distspec::DeviceIndexedHaloExchange> images_;
  std::uint64_t images_generation_ = 0;  // the list build and the row counts images_ was made for
  std::size_t images_owned_ = 0, images_halo_ = 0;

};

}    // namespace LAMMPS_NS

#endif
