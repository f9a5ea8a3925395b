/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the core's HaloExchange over LAMMPS ghost atoms, for rows in host memory
   (pair_style distspec with a CPU model). The comm callbacks copy the listed rows.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_H
#define LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_H

#include "lammps_halo_exchange_base.h"

#include <vector>

namespace LAMMPS_NS {

class LammpsHaloExchange : public LammpsHaloExchangeBase {
 public:
  using LammpsHaloExchangeBase::LammpsHaloExchangeBase;
  using LammpsHaloExchangeBase::forward;
  using LammpsHaloExchangeBase::reverse;

  void forward(distspec::Rows<float> rows) override;
  void reverse(distspec::Rows<float> rows) override;
  void all_reduce_sum(double *values, std::size_t n) override;

  int pack_forward(int n, const int *list, double *buf) override;
  void unpack_forward(int n, int first, const double *buf) override;
  int pack_reverse(int n, int first, double *buf) override;
  void unpack_reverse(int n, const int *list, const double *buf) override;

 protected:
  void bind(const distspec::Rows<double> &rows) override;
  void unbind() override { block_ = nullptr; }
  void zero_halo_rows(const distspec::Rows<double> &rows) override;

  // The block in flight: fp32 blocks travel as fp64 so reverse sums accumulate in fp64.
  double *block_ = nullptr;
  int width_ = 0;

 private:
  // An fp32 block through staging_ in fp64, forward or reverse.
  void widened(distspec::Rows<float> rows, bool reverse);

  std::vector<double> staging_;
};

}    // namespace LAMMPS_NS

#endif
