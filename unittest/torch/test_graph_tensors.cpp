// The torch model kinds' view of an AtomGraph (lib/models/torch/graph_tensors.h) against plain
// loops over the same arrays: the CSR edges expanded and filtered to the cutoff (a pair exactly
// at the cutoff is out, as the host loops had it), receivers without senders, a graph without
// receivers, and the sums and rows deliver() hands to the host.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "models/torch/graph_tensors.h"

namespace distspec::test {
namespace {

using models::AtomGraph;
using models::ModelOutputs;
using models::OutputRequest;
namespace tk = models::torch_kind;

constexpr double kCutoff = 4.5;

// 20 owned and 15 halo rows in an 8 A box; receivers 0..19 but every fourth without senders,
// each with up to 12 senders at random (skin pairs beyond the cutoff among them), and rows 0
// and 1 exactly one cutoff apart.
struct RandomGraph {
  std::vector<double> x;
  std::vector<int> species, receivers, offsets{0}, senders;
  AtomGraph graph;

  RandomGraph() {
    std::mt19937 rng(2026);
    std::uniform_real_distribution<double> coordinate(0.0, 8.0);
    std::uniform_int_distribution<int> row(0, 34), count(1, 12), kind(-1, 1);
    for (int i = 0; i < 35; ++i) {
      for (int c = 0; c < 3; ++c) x.push_back(coordinate(rng));
      species.push_back(kind(rng));
    }
    x[0] = x[1] = x[2] = 0.0;
    x[3] = kCutoff, x[4] = x[5] = 0.0;
    for (int r = 0; r < 20; ++r) {
      receivers.push_back(r);
      if (r % 4 != 3) {
        if (r == 0) senders.push_back(1);
        for (int k = count(rng); k > 0; --k)
          if (const int j = row(rng); j != r) senders.push_back(j);
      }
      offsets.push_back(static_cast<int>(senders.size()));
    }
    graph = models::csr_graph(20, 15, x.data(), species.data(), receivers, offsets, senders);
  }
};

// The pairs the host loops kept: in CSR order, |x_j - x_i|^2 < cutoff^2.
std::pair<std::vector<int64_t>, std::vector<int64_t>> looped_pairs(const AtomGraph& g) {
  std::vector<int64_t> s, r;
  for (std::size_t k = 0; k < g.n_receivers; ++k) {
    const int i = g.receivers[k];
    for (int e = g.offsets[k]; e < g.offsets[k + 1]; ++e) {
      const int j = g.senders[e];
      const double* a = g.positions + 3 * i;
      const double* b = g.positions + 3 * j;
      const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
      if (dx * dx + dy * dy + dz * dz >= kCutoff * kCutoff) continue;
      s.push_back(j);
      r.push_back(i);
    }
  }
  return {s, r};
}

std::vector<int64_t> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

TEST(GraphTensors, EdgesWithinTheCutoffAreThoseTheHostLoopsKept) {
  RandomGraph random;
  const tk::GraphTensors rows = tk::wrap_graph(random.graph, c10::Device(c10::kCPU));
  // Wrapped, not copied.
  EXPECT_EQ(rows.positions.data_ptr<double>(), random.x.data());
  EXPECT_EQ(rows.senders.data_ptr<int>(), random.senders.data());
  tk::EdgePairs pairs = tk::expand_edges(rows);
  ASSERT_EQ(pairs.size(), static_cast<int64_t>(random.senders.size()));
  pairs = pairs.where(tk::within_cutoff(rows.positions, pairs, kCutoff));
  const auto [senders, receivers] = looped_pairs(random.graph);
  ASSERT_LT(senders.size(), random.senders.size()) << "the graph should hold pairs beyond the cutoff";
  EXPECT_EQ(values(pairs.senders), senders);
  EXPECT_EQ(values(pairs.receivers), receivers);
  // The pair exactly one cutoff apart is out.
  ASSERT_EQ(random.senders[0], 1);
  for (std::size_t k = 0; k < senders.size(); ++k) EXPECT_FALSE(senders[k] == 1 && receivers[k] == 0) << "edge " << k;
}

TEST(GraphTensors, AGraphWithoutReceiversHasNoPairs) {
  RandomGraph random;
  random.graph.n_receivers = 0;
  random.graph.offsets = nullptr;
  random.graph.senders = nullptr;
  const tk::GraphTensors rows = tk::wrap_graph(random.graph, c10::Device(c10::kCPU));
  const tk::EdgePairs pairs = tk::expand_edges(rows);
  EXPECT_EQ(pairs.size(), 0);
  EXPECT_EQ(pairs.where(tk::within_cutoff(rows.positions, pairs, kCutoff)).size(), 0);
}

TEST(GraphTensors, DeliverSumsTheEnergyAndVirialAndFillsTheHostRows) {
  RandomGraph random;
  const int64_t n = static_cast<int64_t>(random.graph.n_rows());
  const at::Tensor x = tk::wrap_graph(random.graph, c10::Device(c10::kCPU)).positions;
  const at::Tensor f = at::randn({n, 3}, at::dtype(at::kDouble));
  tk::RowResults results{at::randn({n}, at::dtype(at::kDouble)), f, tk::virial_rows_of(x, f)};
  const at::Tensor e = results.energy_rows.clone();
  OutputRequest request;
  request.energy_rows = request.virial = request.virial_rows = true;
  request.rows_on_device = true;  // the rows are host memory: they come back in the vectors all the same
  ModelOutputs out;
  tk::RowResults kept;
  tk::deliver(results, random.graph.n_rows(), request, out, kept);
  EXPECT_FALSE(out.rows_on_device());
  double energy = 0.0, virial[6] = {};
  const double* fv = f.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    energy += e[i].item<double>();
    const double* r = random.x.data() + 3 * i;
    const double* fi = fv + 3 * i;
    const double v[6] = {r[0] * fi[0], r[1] * fi[1], r[2] * fi[2], r[0] * fi[1], r[0] * fi[2], r[1] * fi[2]};
    for (int k = 0; k < 6; ++k) {
      virial[k] += v[k];
      EXPECT_DOUBLE_EQ(out.virial_rows[6 * i + k], v[k]);
    }
    EXPECT_DOUBLE_EQ(out.energy_rows[i], e[i].item<double>());
    for (int c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(out.forces[3 * i + c], fi[c]);
  }
  EXPECT_NEAR(out.energy, energy, 1e-12 * n);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(out.virial[k], virial[k], 1e-12 * n * 64);
}

}  // namespace
}  // namespace distspec::test
