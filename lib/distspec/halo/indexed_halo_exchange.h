// A single-process halo exchange: each halo row is a copy of the owned row named by an index
// map (periodic images of one's own atoms are exactly this). Used where no communicator exists:
// model unit tests, finite-difference checks, tools.
#pragma once

#include <vector>

#include "distspec/halo/halo_exchange.h"

namespace distspec {

class IndexedHaloExchange final : public HaloExchange {
 public:
  // halo_owner[h] is the owned row that halo row n_owned + h copies.
  IndexedHaloExchange(std::size_t n_owned, std::vector<std::size_t> halo_owner);

  std::size_t n_owned() const override { return n_owned_; }
  std::size_t n_halo() const override { return halo_owner_.size(); }
  int n_ranks() const override { return 1; }

  void forward(Rows<double> rows) override { forward_impl(rows); }
  void forward(Rows<float> rows) override { forward_impl(rows); }
  void reverse(Rows<double> rows) override { reverse_impl(rows); }
  void reverse(Rows<float> rows) override { reverse_impl(rows); }
  void all_reduce_sum(double*, std::size_t) override {}

 private:
  template <class T> void forward_impl(Rows<T> rows) const;
  template <class T> void reverse_impl(Rows<T> rows) const;

  std::size_t n_owned_;
  std::vector<std::size_t> halo_owner_;
};

}  // namespace distspec
