// The graph a host passes for the "expanded" halo strategy: a ghost shell of `layers` x cutoff
// (+ skin), and a full neighbour list over EVERY row, halo rows included, so that a
// message-passing model computes each layer on the halo rows too and needs no feature
// exchange. Rows and the halo map are those of a PeriodicGraph of that deeper shell; halo rows
// near the shell's outer face have incomplete neighbourhoods, which reach the owned rows only
// after more than `layers` hops.
#pragma once

#include <vector>

#include "periodic_graph.h"

namespace distspec::test {

class ExpandedGraph {
 public:
  ExpandedGraph(const Crystal& crystal, double cutoff, double skin, int layers);

  const PeriodicGraph& rows() const { return shell_; }  // positions, owners, halo exchange
  std::size_t n_edges() const { return senders_.size(); }
  models::AtomGraph graph() const;  // views into this object

 private:
  PeriodicGraph shell_;
  std::vector<int> receivers_, offsets_, senders_;
};

}  // namespace distspec::test
