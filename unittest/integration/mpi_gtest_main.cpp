// GoogleTest main for tests that run on every rank of an mpirun: one copy of the report (rank 0),
// and a failure on any rank fails the whole run. Rank 0 also prints every rank's skips with their
// reasons, and the counts (skip_report.h), for scripts/test_summary.py.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "library.h"
#include "skip_report.h"

namespace {

// Every rank's string on rank 0 (the others get nothing). Every rank ends each test, in the same
// order, so this collective in the listener pairs up.
std::vector<std::string> gather_on_rank0(const std::string& mine)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), offsets(size);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) offsets[r] = total, total += lengths[r];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return {};
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.push_back(all.substr(offsets[r], lengths[r]));
  return out;
}

}  // namespace

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new distspec::testing::SkipReport(gather_on_rank0, rank == 0));
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#ifdef DISTSPEC_LAMMPS_HAS_KOKKOS
  // Kokkos initialises once per process (the first `-k on` instance) and finalises here.
  lammps_kokkos_finalize();
#endif
  MPI_Finalize();
  return failed;
}
