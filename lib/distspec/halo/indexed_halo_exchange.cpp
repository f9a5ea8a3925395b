#include "distspec/halo/indexed_halo_exchange.h"

#include <algorithm>

#include "distspec/error.h"

namespace distspec {

IndexedHaloExchange::IndexedHaloExchange(std::size_t n_owned, std::vector<std::size_t> halo_owner)
    : n_owned_(n_owned), halo_owner_(std::move(halo_owner)) {
  for (std::size_t owner : halo_owner_)
    if (owner >= n_owned_)
      throw Error("halo.index", "", "halo owner index " + std::to_string(owner) + " is not an owned row (n_owned = " +
                          std::to_string(n_owned_) + ")");
}

template <class T>
void IndexedHaloExchange::forward_impl(Rows<T> rows) const {
  for (std::size_t h = 0; h < halo_owner_.size(); ++h)
    std::copy_n(rows.row(halo_owner_[h]), rows.width, rows.row(n_owned_ + h));
}

template <class T>
void IndexedHaloExchange::reverse_impl(Rows<T> rows) const {
  // Accumulate every owner's contributions in fp64 before rounding back, as a
  // multi-rank exchange would.
  std::vector<double> acc(n_owned_ * static_cast<std::size_t>(rows.width));
  for (std::size_t i = 0; i < n_owned_; ++i)
    for (int c = 0; c < rows.width; ++c) acc[i * rows.width + c] = rows.row(i)[c];
  for (std::size_t h = 0; h < halo_owner_.size(); ++h) {
    T* src = rows.row(n_owned_ + h);
    for (int c = 0; c < rows.width; ++c) {
      acc[halo_owner_[h] * rows.width + c] += src[c];
      src[c] = T(0);
    }
  }
  for (std::size_t i = 0; i < n_owned_; ++i)
    for (int c = 0; c < rows.width; ++c) rows.row(i)[c] = static_cast<T>(acc[i * rows.width + c]);
}

template void IndexedHaloExchange::forward_impl<double>(Rows<double>) const;
template void IndexedHaloExchange::forward_impl<float>(Rows<float>) const;
template void IndexedHaloExchange::reverse_impl<double>(Rows<double>) const;
template void IndexedHaloExchange::reverse_impl<float>(Rows<float>) const;

}  // namespace distspec
