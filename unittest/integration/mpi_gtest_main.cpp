// GoogleTest main for tests that run on every rank of an mpirun: one copy of the report (rank 0),
// and a failure on any rank fails the whole run.
#include <gtest/gtest.h>
#include <mpi.h>

#include "library.h"

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
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#ifdef DISTSPEC_LAMMPS_HAS_KOKKOS
  // Kokkos initialises once per process (the first `-k on` instance) and finalises here.
  lammps_kokkos_finalize();
#endif
  MPI_Finalize();
  return failed;
}
