// Nodes grouped by element, for the CPU kernels that take one element's nodes at a time so that
// the element's weights stay in cache (symmetric_contraction.cpp, element_linear.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace distspec::models::mace {

// The nodes of element e are order[first[e]] .. order[first[e + 1] - 1], in node order.
struct NodesByElement {
  std::vector<int64_t> order, first;
};

// A counting sort of species (each in [0, elements), checked by the caller).
inline NodesByElement group_by_element(const int64_t* species, int64_t nodes, int64_t elements) {
  NodesByElement groups;
  groups.first.assign(elements + 1, 0);
  for (int64_t n = 0; n < nodes; ++n) ++groups.first[species[n] + 1];
  for (int64_t e = 0; e < elements; ++e) groups.first[e + 1] += groups.first[e];
  groups.order.resize(nodes);
  std::vector<int64_t> next(groups.first.begin(), groups.first.end() - 1);
  for (int64_t n = 0; n < nodes; ++n) groups.order[next[species[n]]++] = n;
  return groups;
}

}  // namespace distspec::models::mace
