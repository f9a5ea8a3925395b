// The REPLICA package's multi-partition commands with pair_style distspec: neb, prd, tad and
// temper, each run on partitions of this job's ranks (-partition), once with distspec and once
// with LAMMPS' own eam/alloy on the same input, and compared replica by replica.
//
// These commands drive the pair style in ways an MD run does not: Verlet::setup_minimal (PRD's
// dephasing and event checks, TAD) and Min::setup (every NEB stage, every quench) build the
// neighbour lists and then reset neighbor->ncalls, replicas swap temperatures and reset
// velocities (temper), and NEB's inter-replica forces come from every partition's forces. A
// style that missed a list build would compute with stale edges: energies off by percents, a
// different minimum energy path, a different barrier.
//
// Compared per replica after the command: the potential energy and forces at the positions the
// command left (a run 0 in each partition), and those positions. The runs differ only in the
// order of floating-point sums (1e-14 in a force), which the minimizations and a few hundred MD
// steps amplify to 1e-10 or so; a stale list, a wrong force anywhere in the command, shows at
// 1e-3 and above.
//
// Registered on 4 ranks (CMakeLists.txt): neb, tad and temper on 4 partitions of 1 rank (tad
// takes only 1-rank replicas), prd on 2 partitions of 2 ranks (each replica decomposed).
#include <gtest/gtest.h>

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "lammps_session.h"
#include "library.h"
#include "watchdog.h"

namespace dt = distspec::testing;

namespace {

constexpr std::chrono::seconds kLimit{600};

// What one partition holds after the command.
struct Replica {
  double pe = 0.0;
  std::vector<double> x, f;  // by atom ID
  double box[3] = {0.0, 0.0, 0.0};  // edge lengths of the (orthogonal, periodic) box
};

// Per-atom data by atom ID. The vacancy leaves the IDs gapped, which lammps_gather_atoms refuses:
// gathered unordered with the IDs, then sorted.
std::vector<double> gather_by_id(dt::LammpsSession& lmp, const std::string& name)
{
  const auto n = static_cast<std::size_t>(lmp.natoms());
  std::vector<int> ids(n);
  std::vector<double> values(3 * n), out(3 * n);
  lammps_gather_atoms_concat(lmp.handle(), const_cast<char*>("id"), 0, 1, ids.data());
  lammps_gather_atoms_concat(lmp.handle(), const_cast<char*>(name.c_str()), 1, 3, values.data());
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  for (std::size_t k = 0; k < n; ++k)
    for (int c = 0; c < 3; ++c) out[3 * k + c] = values[3 * order[k] + c];
  return out;
}

// A folder for the run's files (NEB's final configuration), the same path on every rank.
std::string shared_folder(const std::string& name)
{
  char buffer[256] = {};
  if (dt::world_rank() == 0) {
    std::snprintf(buffer, sizeof buffer, "/tmp/distspec_replica_%d_%s", static_cast<int>(getpid()), name.c_str());
    std::string command = std::string("mkdir -p ") + buffer;
    if (std::system(command.c_str()) != 0) buffer[0] = '\0';
  }
  MPI_Bcast(buffer, sizeof buffer, MPI_CHAR, 0, MPI_COMM_WORLD);
  return buffer;
}

// Every partition's outcome, on every rank: each partition runs `input`, then `run 0` gives the
// energy and forces at the positions the input left.
std::vector<Replica> run_partitions(int partitions, const std::string& input)
{
  const int per_partition = dt::world_size() / partitions;
  const std::string layout = std::to_string(partitions) + "x" + std::to_string(per_partition);
  dt::LammpsSession lmp({"-partition", layout, "-in", "none", "-plog", "none", "-pscreen", "none"});
  lmp.run("plugin load " + dt::plugin_path() + "\n" + input + "\nthermo_style custom step pe\nrun 0 post no\n");
  Replica mine;
  mine.pe = lmp.thermo("pe");
  mine.x = gather_by_id(lmp, "x");
  mine.f = gather_by_id(lmp, "f");
  const char* edges[] = {"lx", "ly", "lz"};
  for (int k = 0; k < 3; ++k) mine.box[k] = lmp.thermo(edges[k]);

  // Partition p is universe ranks [p * per_partition, (p + 1) * per_partition): its first rank
  // tells everyone.
  std::vector<Replica> all(partitions);
  for (int p = 0; p < partitions; ++p) {
    Replica r = dt::world_rank() == p * per_partition ? mine : Replica{};
    long n = static_cast<long>(r.x.size());
    MPI_Bcast(&r.pe, 1, MPI_DOUBLE, p * per_partition, MPI_COMM_WORLD);
    MPI_Bcast(r.box, 3, MPI_DOUBLE, p * per_partition, MPI_COMM_WORLD);
    MPI_Bcast(&n, 1, MPI_LONG, p * per_partition, MPI_COMM_WORLD);
    r.x.resize(n);
    r.f.resize(n);
    MPI_Bcast(r.x.data(), static_cast<int>(n), MPI_DOUBLE, p * per_partition, MPI_COMM_WORLD);
    MPI_Bcast(r.f.data(), static_cast<int>(n), MPI_DOUBLE, p * per_partition, MPI_COMM_WORLD);
    all[p] = std::move(r);
  }
  return all;
}

// The largest |a - b| over the elements (absolute: a converged NEB image has forces near zero,
// which a relative bound would magnify); with a box, the minimum-image distance of positions
// (LAMMPS wraps atoms only when it rebuilds its lists).
double deviation(const std::vector<double>& a, const std::vector<double>& b, const double* box = nullptr)
{
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    double d = a[i] - b[i];
    if (box) d -= box[i % 3] * std::round(d / box[i % 3]);
    worst = std::max(worst, std::abs(d));
  }
  return worst;
}

struct Bounds {
  double pe = 1e-10;         // relative
  double forces = 1e-8;      // eV/Angstrom
  double positions = 1e-8;   // Angstrom
};

void expect_replicas_agree(const std::vector<Replica>& got, const std::vector<Replica>& want, const Bounds& bounds)
{
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t p = 0; p < got.size(); ++p) {
    SCOPED_TRACE("replica " + std::to_string(p));
    const double pe = std::abs(got[p].pe - want[p].pe) / std::abs(want[p].pe);
    const double f = deviation(got[p].f, want[p].f);
    const double x = deviation(got[p].x, want[p].x, want[p].box);
    char line[160];
    std::snprintf(line, sizeof line, "pe %.3g (relative), forces %.3g eV/A, positions %.3g A", pe, f, x);
    ::testing::Test::RecordProperty("replica " + std::to_string(p), line);
    EXPECT_LE(pe, bounds.pe) << "pe " << got[p].pe << " against eam/alloy's " << want[p].pe;
    EXPECT_LE(f, bounds.forces);
    EXPECT_LE(x, bounds.positions);
  }
}

const std::string kDistspecPair =
    "pair_style distspec\npair_coeff * * " + dt::potential("cuni_eam_alloy.json") + " Cu Ni\n";
const std::string kEamAlloyPair = "pair_style eam/alloy\npair_coeff * * " + dt::potential("CuNi.eam.alloy") + " Cu Ni\n";

// Copper-nickel, 3x3x3 fcc cells (108 sites), the atom at the origin removed: a vacancy. On a
// 1-rank partition create_atoms numbers the atoms cell by cell, basis atom by basis atom, so
// atom 2 sits at (a/2, a/2, 0), a nearest neighbour of the vacant site.
std::string vacancy_deck(double nickel_fraction)
{
  return R"(units metal
atom_modify map array sort 0 0.0
boundary p p p
lattice fcc 3.615
region box block 0 3 0 3 0 3
create_box 2 box
create_atoms 1 box
mass 1 63.546
mass 2 58.693
)" + (nickel_fraction > 0 ? "set type 1 type/fraction 2 " + std::to_string(nickel_fraction) + " 12393\nset atom 2 type 1\n"
                          : std::string()) +
         "group vacancy id 1\ndelete_atoms group vacancy\n";
}

// The commands on the vacancy deck in `partitions` partitions, with distspec, then with eam/alloy.
struct Outcomes {
  std::vector<Replica> distspec, eam_alloy;
};
Outcomes run_both(int partitions, const std::string& commands)
{
  return {run_partitions(partitions, vacancy_deck(0.25) + kDistspecPair + commands),
          run_partitions(partitions, vacancy_deck(0.25) + kEamAlloyPair + commands)};
}

// `command` on the vacancy deck in `partitions` partitions, after `variables`, with velocities at
// `temperature` and a Nose-Hoover thermostat (fix nvt) at it: every replica against eam/alloy's
// after the few hundred MD steps.
void expect_md_command_agrees(const char* name, int partitions, const std::string& variables,
                              const std::string& temperature, int seed, const std::string& command)
{
  dt::Watchdog watchdog(name, kLimit);
  const Outcomes md = run_both(partitions, variables + "velocity all create " + temperature + " " +
                                               std::to_string(seed) + " loop geom\nfix nvt all nvt temp " + temperature +
                                               " " + temperature + " 0.1\ntimestep 0.002\n" + command + "unfix nvt\n");
  expect_replicas_agree(md.distspec, md.eam_alloy, Bounds{1e-9, 1e-6, 1e-7});
}

class Replicas : public ::testing::Test {
 protected:
  void SetUp() override
  {
    if (dt::world_size() != 4)
      GTEST_FAIL() << "the replica tests are registered for 4 ranks (CMakeLists.txt), not " << dt::world_size();
  }
};

// A vacancy hop in copper-nickel: atom 2 moves into the vacant site. Climbing-image NEB on 4
// replicas of 1 rank; the barrier and every replica's energy, forces and positions against the
// same NEB with eam/alloy. Converged to 1e-6 eV/Angstrom: where quickmin stops at a loose
// tolerance depends on the last bits of the forces (5e-5 Angstrom apart at 1e-3 eV/Angstrom),
// at a tight one it does not (6e-8 Angstrom).
TEST_F(Replicas, NebVacancyHopMatchesEamAlloy)
{
  dt::Watchdog watchdog("neb", kLimit);
  const std::string folder = shared_folder("neb");
  const std::string final_file = folder + "/final.hop";
  if (dt::world_rank() == 0) std::ofstream(final_file) << "1\n2 0.0 0.0 0.0\n";
  MPI_Barrier(MPI_COMM_WORLD);
  const Outcomes neb = run_both(4, R"(
fix neb all neb 1.0
min_style quickmin
timestep 0.01
thermo 100
neb 0.0 1e-6 3000 2000 100 final )" + final_file + "\nunfix neb\n");
  const std::vector<Replica>&got = neb.distspec, &want = neb.eam_alloy;
  expect_replicas_agree(got, want, Bounds{1e-10, 1e-5, 1e-6});

  auto barrier = [](const std::vector<Replica>& path) {
    double top = path.front().pe;
    for (const Replica& r : path) top = std::max(top, r.pe);
    return top - path.front().pe;
  };
  char line[160];
  std::snprintf(line, sizeof line, "%.12g eV against eam/alloy's %.12g eV", barrier(got), barrier(want));
  ::testing::Test::RecordProperty("barrier", line);
  EXPECT_NEAR(barrier(got), barrier(want), 1e-8);
  // A vacancy hop in copper takes some tenths of an eV: a path that never left the first
  // replica, or no hop at all, would pass the comparison above without meaning anything.
  EXPECT_GT(barrier(want), 0.2);
  EXPECT_LT(barrier(want), 2.0);
}

// Parallel replica dynamics of the vacancy at 1 200 K on 2 replicas of 2 ranks each:
// dephasing, MD with event checks by quenching, each through setup_minimal and Min::setup.
// Dephasing draws velocities rank by rank (vel local): `loop geom` seeds each atom's velocity
// with the bits of its position, which a quench leaves equal to 1e-14, not bit for bit.
TEST_F(Replicas, PrdMatchesEamAlloy)
{
  expect_md_command_agrees("prd", 2, "", "1200", 5287287, R"(compute event all event/displace 1.0
thermo 50
prd 300 50 10 10 50 event 54985 temp 1200 min 1e-8 1e-8 100 100 vel local gaussian
)");
}

// Temperature-accelerated dynamics: MD at the high temperature with quenches, on 4 replicas of
// 1 rank (the NEB of an event runs on all of them).
TEST_F(Replicas, TadMatchesEamAlloy)
{
  expect_md_command_agrees("tad", 4, "", "1400", 5287286, R"(compute event all event/displace 1.0
thermo 50
tad 200 50 1000 1400 0.05 1.0 event min 1e-8 1e-8 100 100 neb 0.0 0.01 100 100 20 neb_style quickmin neb_step 0.01 neb_log none
)");
}

// Replica exchange (temper) on 4 replicas from 800 K to 1 100 K: swaps of temperatures between
// partitions, velocities rescaled, the thermostat's target reset.
TEST_F(Replicas, TemperMatchesEamAlloy)
{
  expect_md_command_agrees("temper", 4, "variable t world 800 900 1000 1100\n", "$t", 4928459, R"(thermo 50
temper 200 20 $t nvt 3847 58382
)");
}

}  // namespace
