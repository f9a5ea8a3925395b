#include "expanded_graph.h"

#include <array>
#include <cmath>
#include <map>

namespace distspec::test {

ExpandedGraph::ExpandedGraph(const Crystal& crystal, double cutoff, double skin, int layers)
    : shell_(crystal, layers * cutoff, skin) {
  // Rows binned into cubes of the list's reach, so each row looks at 27 bins, not every row.
  const double reach = cutoff + skin;
  const std::vector<double>& x = shell_.positions();
  const std::size_t n = shell_.n_rows();
  using Bin = std::array<long, 3>;
  auto bin_of = [&](std::size_t i) {
    return Bin{static_cast<long>(std::floor(x[3 * i] / reach)), static_cast<long>(std::floor(x[3 * i + 1] / reach)),
               static_cast<long>(std::floor(x[3 * i + 2] / reach))};
  };
  std::map<Bin, std::vector<int>> bins;
  for (std::size_t i = 0; i < n; ++i) bins[bin_of(i)].push_back(static_cast<int>(i));

  offsets_.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    receivers_.push_back(static_cast<int>(i));
    const Bin b = bin_of(i);
    for (long dx = -1; dx <= 1; ++dx)
      for (long dy = -1; dy <= 1; ++dy)
        for (long dz = -1; dz <= 1; ++dz) {
          auto it = bins.find({b[0] + dx, b[1] + dy, b[2] + dz});
          if (it == bins.end()) continue;
          for (int j : it->second) {
            if (static_cast<std::size_t>(j) == i) continue;
            double rsq = 0.0;
            for (int k = 0; k < 3; ++k) rsq += (x[3 * i + k] - x[3 * j + k]) * (x[3 * i + k] - x[3 * j + k]);
            if (rsq < reach * reach) senders_.push_back(j);
          }
        }
    offsets_.push_back(static_cast<int>(senders_.size()));
  }
}

models::AtomGraph ExpandedGraph::graph() const {
  models::AtomGraph g = shell_.graph();
  g.n_receivers = receivers_.size();
  g.receivers = receivers_.data();
  g.offsets = offsets_.data();
  g.senders = senders_.data();
  return g;
}

}  // namespace distspec::test
