// An IndexedHaloExchange that logs each collective; its all-reduce sums `ranks` identical copies
// of the data, as that many ranks holding the same partial would.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "distspec/halo/indexed_halo_exchange.h"

namespace distspec::test {

class RecordingHalo final : public HaloExchange {
 public:
  RecordingHalo(std::size_t n_owned, std::vector<std::size_t> halo_owner, int ranks = 2)
      : inner_(n_owned, std::move(halo_owner)), ranks_(ranks) {}
  RecordingHalo(IndexedHaloExchange inner, int ranks) : inner_(std::move(inner)), ranks_(ranks) {}

  std::size_t n_owned() const override { return inner_.n_owned(); }
  std::size_t n_halo() const override { return inner_.n_halo(); }
  int n_ranks() const override { return ranks_; }
  void forward(Rows<double> r) override { log.push_back("forward"), inner_.forward(r); }
  void forward(Rows<float> r) override { log.push_back("forward"), inner_.forward(r); }
  void reverse(Rows<double> r) override { log.push_back("reverse"), inner_.reverse(r); }
  void reverse(Rows<float> r) override { log.push_back("reverse"), inner_.reverse(r); }
  void all_reduce_sum(double* v, std::size_t n) override {
    log.push_back("all_reduce");
    for (std::size_t i = 0; i < n; ++i) v[i] *= ranks_;
  }

  // How many of the logged collectives are `what` ("forward", "reverse", "all_reduce").
  int count(const std::string& what) const { return static_cast<int>(std::count(log.begin(), log.end(), what)); }

  std::vector<std::string> log;

 private:
  IndexedHaloExchange inner_;
  int ranks_;
};

}  // namespace distspec::test
