// The test support itself: halo rows are lattice images of their owners, the edge list holds
// exactly the pairs within cutoff + skin (counted by brute force over images), and moves keep
// images consistent.
#include <gtest/gtest.h>

#include <cmath>

#include "periodic_graph.h"

namespace distspec::test {
namespace {

// Pairs (i, j, image n) within `reach`, brute force over a generous range of images.
std::size_t brute_force_pairs(const Crystal& c, double reach) {
  std::size_t count = 0;
  for_each_image_pair(c, 3, [&](std::size_t, std::size_t, double rsq) { count += rsq < reach * reach; });
  return count;
}

class PeriodicGraphTest : public ::testing::TestWithParam<bool> {};

TEST_P(PeriodicGraphTest, HaloRowsAreImagesAndEdgesAreComplete) {
  Crystal c = fcc(3.615, 2);
  if (GetParam()) shear(c, 1.3, -0.7, 0.9);
  jiggle(c, 0.1, 7);
  const double cutoff = 4.0, skin = 1.0;
  const PeriodicGraph g(c, cutoff, skin);
  EXPECT_GT(g.n_rows(), g.n_owned());
  EXPECT_EQ(g.n_edges(), brute_force_pairs(c, cutoff + skin));

  const Mat3 inv = g.box().inverse();
  for (std::size_t row = g.n_owned(); row < g.n_rows(); ++row) {
    const std::size_t o = g.owner(row);
    Vec3 del{};
    for (int k = 0; k < 3; ++k) del[k] = g.positions()[3 * row + k] - g.positions()[3 * o + k];
    for (int k = 0; k < 3; ++k) {
      const double n = inv[k][0] * del[0] + inv[k][1] * del[1] + inv[k][2] * del[2];
      EXPECT_NEAR(n, std::round(n), 1e-12);
    }
    EXPECT_EQ(g.species()[row], g.species()[o]);
  }
}

TEST_P(PeriodicGraphTest, DisplaceMovesEveryImage) {
  Crystal c = fcc(3.615, 2);
  if (GetParam()) shear(c, 1.3, -0.7, 0.9);
  PeriodicGraph g(c, 4.0, 1.0);
  const std::vector<double> before = g.positions();
  g.displace(3, {0.1, -0.2, 0.3});
  std::size_t moved = 0;
  for (std::size_t row = 0; row < g.n_rows(); ++row) {
    const bool mine = g.owner(row) == 3;
    moved += mine;
    EXPECT_NEAR(g.positions()[3 * row + 1] - before[3 * row + 1], mine ? -0.2 : 0.0, 1e-14);
  }
  EXPECT_GT(moved, 1u);
}

INSTANTIATE_TEST_SUITE_P(Boxes, PeriodicGraphTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "triclinic" : "orthorhombic"; });

}  // namespace
}  // namespace distspec::test
