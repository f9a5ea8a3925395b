// `pair_style distspec ... timing yes`: at the end of a run rank 0 logs the breakdown table; its
// times are non-negative, min <= avg <= max, the sections add up to their total, and the total
// to about LAMMPS' own Pair time. Without the keyword there is no table. Under KOKKOS the same
// holds for distspec/kk (and, with LAMMPS 29 Sep 2021, for the internal fix that stands in for
// Pair::finish()).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mpi.h>
#include <sstream>
#include <string>
#include <vector>

#include "lammps_session.h"

namespace dt = distspec::testing;
using dt::potential;

namespace {

const std::string kArgon = R"(
units metal
atom_style atomic
lattice fcc 5.26
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 box
mass 1 39.948
velocity all create 120.0 4928459 loop geom
neighbor 1.0 bin
neigh_modify every 5 delay 0 check no
fix 1 all nve
thermo 50
)";

const std::string kCopper = R"(
units metal
atom_style atomic
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 63.546
velocity all create 600.0 4928459 loop geom
neighbor 1.0 bin
fix 1 all nve
thermo 10
)";

const char* const kSections[] = {"Kernels", "Exchange", "Graph", "Edges", "Checks", "Writeback"};

// The log of `commands` run after loading the plugin (every rank gets rank 0's file).
std::string log_of(const std::string& commands, const std::vector<std::string>& args = {})
{
  const std::string path = ::testing::TempDir() + "distspec_timing_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_np" + std::to_string(dt::world_size()) +
      ".log";
  {
    dt::LammpsSession lmp(args);
    lmp.run("plugin load " + dt::plugin_path() + "\nlog " + path + "\n" + commands + "\nlog none");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Breakdown {
  std::string header;
  std::map<std::string, std::vector<double>> rows;  // section -> min, avg, max, percent
  double pair = -1.0;                               // LAMMPS' Pair time, avg over ranks
};

// The first breakdown table in `log`.
Breakdown breakdown_of(const std::string& log)
{
  Breakdown b;
  std::istringstream in(log);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("DISTSPEC timing breakdown", 0) == 0) {
      b.header = line;
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("LAMMPS Pair time: avg ", 0) == 0) {
      b.pair = std::stod(line.substr(22));
      break;
    }
    const auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string name = line.substr(0, bar);
    name.erase(name.find_last_not_of(' ') + 1);
    std::vector<double> values;
    std::string cell;
    std::istringstream cells(line.substr(bar + 1));
    while (std::getline(cells, cell, '|'))
      if (cell.find_first_of("0123456789") != std::string::npos) values.push_back(std::stod(cell));
    if (values.size() == 4) b.rows[name] = values;
  }
  return b;
}

void expect_consistent(const Breakdown& b)
{
  ASSERT_FALSE(b.header.empty()) << "no DISTSPEC timing breakdown in the log";
  for (const char* s : kSections) {
    ASSERT_TRUE(b.rows.count(s)) << "section " << s << " missing";
    const auto& r = b.rows.at(s);
    EXPECT_GE(r[0], 0.0) << s;
    EXPECT_LE(r[0], r[1] * (1 + 1e-4) + 1e-9) << s;  // printed to 5 digits
    EXPECT_LE(r[1], r[2] * (1 + 1e-4) + 1e-9) << s;
    EXPECT_GE(r[3], 0.0) << s;
  }
  ASSERT_TRUE(b.rows.count("Total"));
  double sum = 0.0;
  for (const char* s : kSections) sum += b.rows.at(s)[1];
  const double total = b.rows.at("Total")[1];
  EXPECT_NEAR(sum, total, 1e-4 * total + 1e-5);
  EXPECT_GT(b.rows.at("Kernels")[1], 0.0);
  // The sections cover compute() but for ev_init and two clock reads: about LAMMPS' Pair time.
  ASSERT_GT(b.pair, 0.0);
  EXPECT_GT(total, 0.8 * b.pair);
  EXPECT_LT(total, 1.02 * b.pair);
}

}  // namespace

TEST(Timing, TableAddsUpToThePairTime)
{
  const std::string log =
      log_of(kArgon + "pair_style distspec timing yes\npair_coeff * * " + potential("lj_argon.json") + " Ar\nrun 100");
  if (dt::world_rank() != 0) return;
  const Breakdown b = breakdown_of(log);
  expect_consistent(b);
  EXPECT_NE(b.header.find("pair_style distspec timing yes, 100 steps, " + std::to_string(dt::world_size()) +
                          " MPI tasks"),
            std::string::npos)
      << b.header;
  // Reneighbouring every 5 steps: the edge arrays were rebuilt and timed.
  EXPECT_GT(b.rows.at("Edges")[1], 0.0);
}

// One table per run; the setup computation of the second run is not counted in it.
TEST(Timing, OneTablePerRun)
{
  const std::string log = log_of(kCopper + "pair_style distspec timing yes\npair_coeff * * " +
                                 potential("cu_mpnn_L2.json") + " Cu\nrun 10\nrun 5");
  if (dt::world_rank() != 0) return;
  std::size_t tables = 0;
  for (auto at = log.find("DISTSPEC timing breakdown"); at != std::string::npos;
       at = log.find("DISTSPEC timing breakdown", at + 1))
    ++tables;
  EXPECT_EQ(tables, 2u);
  EXPECT_NE(log.find(", 5 steps, "), std::string::npos);
  const Breakdown b = breakdown_of(log);
  expect_consistent(b);
  // The 2-layer model refreshes its halo once forward and once in reverse per step.
  EXPECT_GT(b.rows.at("Exchange")[1], 0.0);
}

TEST(Timing, NoTableWithoutTheKeyword)
{
  const std::string log =
      log_of(kArgon + "pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar\nrun 20");
  if (dt::world_rank() != 0) return;
  EXPECT_EQ(log.find("DISTSPEC timing"), std::string::npos);
  EXPECT_NE(log.find("Loop time of"), std::string::npos);
}

#ifdef DISTSPEC_LAMMPS_HAS_KOKKOS
TEST(Timing, KokkosStyleReportsToo)
{
  const std::string log = log_of(
      kCopper + "pair_style distspec timing yes\npair_coeff * * " + potential("cu_eam_u3.json") + " Cu\nrun 20",
      {"-k", "on", "t", "2", "-sf", "kk", "-pk", "kokkos", "newton", "on", "neigh", "half"});
  if (dt::world_rank() != 0) return;
  const Breakdown b = breakdown_of(log);
  expect_consistent(b);
  EXPECT_NE(b.header.find("pair_style distspec/kk timing yes, 20 steps"), std::string::npos) << b.header;
}
#endif
