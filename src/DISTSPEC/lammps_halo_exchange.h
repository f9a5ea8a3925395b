/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the core's HaloExchange over LAMMPS ghost atoms.
   Owned rows are atoms [0, nlocal), halo rows are ghosts [nlocal, nlocal+nghost). Forward and
   reverse run through the pair style's comm callbacks, so they follow LAMMPS' own swap pattern
   (several swaps per dimension for thin subdomains, periodic self-images included).

   Rows of a CUDA model stay in GPU memory (set_device_rows): the callbacks pack and unpack the
   listed rows with CUDA kernels, so only the rows LAMMPS sends cross PCIe.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_H
#define LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_H

#include "distspec/halo/halo_exchange.h"

#include <memory>
#include <mpi.h>
#include <vector>

namespace distspec {
class DeviceRowPacker;
}

namespace LAMMPS_NS {

class Pair;
class LAMMPS;

class LammpsHaloExchange final : public distspec::HaloExchange {
 public:
  LammpsHaloExchange(LAMMPS *lmp, Pair *pair);
  ~LammpsHaloExchange() override;

  // Row counts of the current step.
  void resize(std::size_t n_owned, std::size_t n_halo)
  {
    n_owned_ = n_owned;
    n_halo_ = n_halo;
  }
  // The widest row one exchange may carry; the pair style's comm_forward / comm_reverse.
  void set_max_width(int width) { max_width_ = width; }

  // Whether the model hands over rows in GPU memory (a CUDA model). Host rows are still accepted.
  void set_device_rows(bool on);
  bool accepts_device_rows() const override { return device_rows_; }
  void wait_for_device() override;

  std::size_t n_owned() const override { return n_owned_; }
  std::size_t n_halo() const override { return n_halo_; }
  int n_ranks() const override;

  void forward(distspec::Rows<double> rows) override;
  void forward(distspec::Rows<float> rows) override;
  void reverse(distspec::Rows<double> rows) override;
  void reverse(distspec::Rows<float> rows) override;
  void all_reduce_sum(double *values, std::size_t n) override;

  // The pair style's comm callbacks delegate here; they move the block set by forward/reverse.
  int pack_forward(int n, const int *list, double *buf) const;
  void unpack_forward(int n, int first, const double *buf);
  int pack_reverse(int n, int first, double *buf) const;
  void unpack_reverse(int n, const int *list, const double *buf);

 private:
  void check_width(int width) const;
  void bind(double *data, int width);
  template <class Exchange> void widened(distspec::Rows<float> rows, Exchange exchange);

  LAMMPS *lmp_;
  Pair *pair_;
  std::size_t n_owned_ = 0;
  std::size_t n_halo_ = 0;
  int max_width_ = 0;
  // The block in flight: fp32 blocks travel as fp64 so reverse sums accumulate in fp64.
  double *block_ = nullptr;
  int width_ = 0;
  bool block_on_device_ = false;
  std::vector<double> staging_;
  bool device_rows_ = false;
  std::unique_ptr<distspec::DeviceRowPacker> packer_;    // with device rows
};

}    // namespace LAMMPS_NS

#endif
