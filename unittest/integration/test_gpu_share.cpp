// `device cuda` under LAMMPS with more ranks on a node than GPUs and without `gpu_share yes`:
// every rank stops with the reason. The models' `device cuda` runs against `device cpu` and one
// rank are cases (cases/gpu_share_*.json).
//
// Skipped, visibly, where `device cuda` cannot run (a plugin built without CUDA, no GPU).
// ctest runs these under the label `gpu` (np 1 and 2); on one GPU, np 2 is two ranks sharing it.
#include <gtest/gtest.h>

#include <mpi.h>

#include <cstdio>
#include <string>

#include "gpu_availability.h"
#include "lammps_session.h"

namespace dt = distspec::testing;

namespace {

#define REQUIRE_DEVICE_CUDA()                                             \
  do {                                                                    \
    const std::string& why = dt::device_cuda_unavailable();               \
    if (!why.empty()) GTEST_SKIP() << why;                                \
  } while (0)

// An off-lattice crystal of 4 x 4 x 4 fcc cells per rank along x, type 2 on every fifth atom.
std::string crystal(double lattice, double jiggle)
{
  const int cells_x = 4 * dt::world_size();
  return "units metal\nlattice fcc " + std::to_string(lattice) + "\nregion box block 0 " + std::to_string(cells_x) +
      " 0 4 0 4\ncreate_box 2 box\ncreate_atoms 1 box\nset group all type/fraction 2 0.2 4413\nmass * 50.0\n"
      "displace_atoms all random " + std::to_string(jiggle) + " " + std::to_string(jiggle) + " " + std::to_string(jiggle) +
      " 7751 units box\n";
}

// MPI ranks on this rank's node.
int ranks_on_node()
{
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 0;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

// More ranks on the node than GPUs: every rank stops, naming the keyword that allows sharing.
// Whether there are more is the driver's count, decided before the run: a run that refuses
// nothing where it must refuse fails.
TEST(GpuShareRefused, MoreRanksThanGpusWithoutGpuShare)
{
  REQUIRE_DEVICE_CUDA();
  int enough = dt::gpu_count() >= ranks_on_node();
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (enough) GTEST_SKIP() << "a GPU per rank on this node (" << dt::gpu_count() << " GPUs): nothing to refuse";
  dt::LammpsSession lmp;
  const std::string e = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + crystal(5.4, 0.1) +
                                                "pair_style distspec device cuda\npair_coeff * * " +
                                                dt::potential("lj_binary.json") + " Ar Kr\nrun 0 post no");
  EXPECT_FALSE(e.empty()) << "rank " << dt::world_rank() << ": " << ranks_on_node() << " ranks on " << dt::gpu_count()
                          << " GPU(s) without gpu_share ran";
  EXPECT_NE(e.find("add 'gpu_share yes'"), std::string::npos) << e;
}

}    // namespace
