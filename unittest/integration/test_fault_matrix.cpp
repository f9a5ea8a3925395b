// The fault matrix: rank layouts and run sequences that stress domain decomposition, each run
// on this mpirun's ranks and compared with the same script on one rank (MPI_COMM_SELF, inside
// the same job). Registered for 1, 2, 3, 4, 6 and 8 ranks (CMakeLists.txt). In a one-rank job,
// where that would compare a run with itself, the reference is independent of the style's
// path: LAMMPS' own lj/cut and eam for LJ and EAM, `halo expanded` (ghost atoms computed
// instead of exchanged per layer) for the message-passing model, and newton off (ghost forces
// folded by the style, not by LAMMPS' reverse comm) for the torch models. The materials are
// the built-in models (LJ, EAM, message passing) and, in builds with the torch kind, exported
// PyTorch models (a toy network; SevenNet-0, trained, fp32, in the static cases).
//
// Tolerances: a static evaluation must agree to 1e-10 of the largest force (and relative in
// energy): only the order of floating-point sums differs. Dynamics amplify those round-off
// differences; after the few dozen steps run here they stay below 1e-8 (positions relative to
// the box, forces relative to the largest force), far below any physical difference, which
// shows up at 1e-3 or above.
#include <gtest/gtest.h>

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include "lammps_session.h"
#include "watchdog.h"

namespace dt = distspec::testing;

namespace {

constexpr double kStaticTolerance = 1e-10;
constexpr double kDynamicTolerance = 1e-8;
constexpr std::chrono::seconds kCaseLimit{300};

struct Snapshot {
  double pe = 0.0;
  double natoms = 0.0;
  std::vector<double> x, f;  // natoms x 3, in the order of the atoms' positions
};

std::string replace_all(std::string text, const std::string& from, const std::string& to)
{
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Atom IDs depend on the processor grid (create_atoms numbers atoms rank by rank); positions do
// not. Per-atom arrays are put in the order of their atoms' positions.
void canonical_order(Snapshot& s)
{
  const std::size_t n = s.x.size() / 3;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](std::size_t i) {
    return std::array<long long, 3>{std::llround(s.x[3 * i] * 1e6), std::llround(s.x[3 * i + 1] * 1e6),
                                    std::llround(s.x[3 * i + 2] * 1e6)};
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (auto* v : {&s.x, &s.f}) {
    std::vector<double> out(v->size());
    for (std::size_t k = 0; k < n; ++k)
      for (int c = 0; c < 3; ++c) out[3 * k + c] = (*v)[3 * order[k] + c];
    v->swap(out);
  }
}

// Runs `script` (after `plugin load`) on `comm`; @RUN@ becomes a name unique to this run.
Snapshot run_script(const std::string& script, MPI_Comm comm, const std::string& run_name)
{
  dt::LammpsSession lmp({}, comm);
  lmp.run("plugin load " + dt::plugin_path() + "\n" + replace_all(script, "@RUN@", run_name) +
          "\nthermo_style custom step pe\nrun 0 post no");
  Snapshot s;
  s.pe = lmp.thermo("pe");
  s.natoms = lmp.natoms();
  // The final `run 0` re-wraps positions into the box on both runs alike.
  s.x = lmp.gather("x", 3);
  s.f = lmp.gather("f", 3);
  canonical_order(s);
  return s;
}

void broadcast(Snapshot& s)
{
  MPI_Bcast(&s.pe, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&s.natoms, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (auto* v : {&s.x, &s.f}) {
    long n = static_cast<long>(v->size());
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    v->resize(n);
    MPI_Bcast(v->data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
}

double largest(const std::vector<double>& v)
{
  double m = 0.0;
  for (double a : v) m = std::max(m, std::abs(a));
  return m > 0.0 ? m : 1.0;
}

// Largest |got - ref| over `scale`; infinite when sizes differ or a value of either is not finite
// (a NaN would otherwise drop out of the maximum).
double deviation(const std::vector<double>& got, const std::vector<double>& ref, double scale)
{
  if (got.size() != ref.size()) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(ref[i])) return INFINITY;
    worst = std::max(worst, std::abs(got[i] - ref[i]));
  }
  return worst / scale;
}

// The script on every rank of the job, and on rank 0 alone; both must agree within `tolerance`.
struct Material;
void expect_same_as_one_rank(const std::string& name, const std::string& script, double tolerance,
                             double box_length, const Material& m);

// ---- decks ----------------------------------------------------------------------------------

// Argon (LJ) and copper (EAM, message-passing network), fcc, in metal units. `reference` is the
// pair the one-rank job's reference runs instead of `pair`.
struct Material {
  std::string name;
  double lattice;
  std::string mass, pair;
  double tolerance_floor = 0.0;  // a model in fp32 agrees to its own round-off, not 1e-10
  std::string reference;
};

// The same pair lines with the expanded ghost shell.
std::string expanded(const std::string& pair)
{
  return replace_all(pair, "pair_style distspec\n", "pair_style distspec halo expanded\n");
}

Material argon() { return {"lj", 5.26, "mass 1 39.948\n", "pair_style distspec\npair_coeff * * " + dt::potential("lj_argon.json") + " Ar\n", 0.0, "pair_style lj/cut 8.5\npair_coeff 1 1 0.0104 3.4\n"}; }
Material copper_eam() { return {"eam", 3.615, "mass 1 63.546\n", "pair_style distspec\npair_coeff * * " + dt::potential("cu_eam_u3.json") + " Cu\n", 0.0, "pair_style eam\npair_coeff 1 1 " + dt::potential("Cu_u3.eam") + "\n"}; }
Material copper_mpnn() { const std::string pair = "pair_style distspec\npair_coeff * * " + dt::potential("cu_mpnn_L2.json") + " Cu\n"; return {"mpnn", 3.615, "mass 1 63.546\n", pair, 0.0, expanded(pair)}; }

// The script on every rank of the job, and on rank 0 alone; both must agree within `tolerance`.
void expect_same_as_one_rank(const std::string& name, const std::string& script, double tolerance,
                             double box_length, const Material& m)
{
  long job = static_cast<long>(getpid());
  MPI_Bcast(&job, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string stem = "/tmp/distspec_fault_" + std::to_string(job) + "_" + name;
  dt::Watchdog watchdog("fault-matrix case " + name, kCaseLimit);

  Snapshot ref;
  const std::string one_rank = stem + "_one_rank", all_ranks = stem + "_np" + std::to_string(dt::world_size());
  if (dt::world_rank() == 0) {
    ASSERT_NE(script.find(m.pair), std::string::npos) << name << ": the deck runs the material's pair lines";
    ref = run_script(dt::world_size() == 1 ? replace_all(script, m.pair, m.reference) : script, MPI_COMM_SELF, one_rank);
  }
  broadcast(ref);
  const Snapshot got = run_script(script, MPI_COMM_WORLD, all_ranks);
  // Restart files (@RUN@.restart), where the script wrote them.
  if (dt::world_rank() == 0)
    for (const std::string& run : {one_rank, all_ranks}) std::remove((run + ".restart").c_str());

  ASSERT_EQ(got.natoms, ref.natoms) << name;
  ASSERT_GT(ref.natoms, 0.0) << name;
  const double pe = std::abs(got.pe - ref.pe) / std::max(std::abs(ref.pe), 1e-12);
  const double x = deviation(got.x, ref.x, box_length);
  const double f = deviation(got.f, ref.f, largest(ref.f));
  EXPECT_LE(pe, tolerance) << name << ": energy " << got.pe << " on " << dt::world_size() << " ranks, " << ref.pe
                           << " on 1";
  EXPECT_LE(x, tolerance) << name << ": positions";
  EXPECT_LE(f, tolerance) << name << ": forces";
  if (dt::world_rank() == 0)
    std::printf("[ fault    ] %-34s np %d: natoms %.0f, pe %.10g, deviation pe %.1e x %.1e f %.1e\n", name.c_str(),
                dt::world_size(), got.natoms, got.pe, pe, x, f);
}


// Copper with exported PyTorch models (the torch kind), which unittest/torch/make_fixtures.py
// exports at test time: the 2-layer toy message-passing model (ctest fixture torch_fixtures),
// and for the static cases SevenNet-0 (fp32, trained; torch_sevennet_fixtures), whose five
// interaction blocks cost about a second per evaluation here. Only in builds with the torch
// kind, and only once a fixture exists.
enum class TorchModels { toy, toy_and_sevennet };

std::vector<Material> torch_models(TorchModels which)
{
  std::vector<Material> found;
#ifdef DISTSPEC_TORCH_FIXTURES
  const char* env = std::getenv("DISTSPEC_TORCH_FIXTURES");
  const std::string dir = env && *env ? env : DISTSPEC_TORCH_FIXTURES;
  auto add = [&](const std::string& name, const std::string& file, double floor) {
    if (std::ifstream(dir + "/" + file))
    {
      const std::string pair = "pair_style distspec\npair_coeff * * " + dir + "/" + file + " Cu\n";
      // Reference: newton pair off, where the style folds the ghost rows' forces itself.
      found.push_back({name, 3.615, "mass 1 63.546\n", pair, floor, "newton off on\n" + pair});
    }
    else if (dt::world_rank() == 0)
      std::printf("[ fault    ] no %s/%s (ctest torch.fixtures* writes it): no %s rows\n", dir.c_str(), file.c_str(),
                  name.c_str());
  };
  add("torch", "toy_mpnn_L2.json", 0.0);
  if (which == TorchModels::toy_and_sevennet) add("sevennet", "7net0.json", 1e-5);
#else
  (void)which;
#endif
  return found;
}

// `base`, then the torch kind's materials.
std::vector<Material> with_torch(std::vector<Material> base, TorchModels which = TorchModels::toy)
{
  for (Material& m : torch_models(which)) base.push_back(std::move(m));
  return base;
}

std::string header(const Material& m, const std::string& processors = "")
{
  return "units metal\natom_style atomic\natom_modify map yes\n" + processors + "lattice fcc " + std::to_string(m.lattice) + "\n";
}

// Thermal noise, the same on every processor grid.
const std::string kDisplace = "displace_atoms all random 0.1 0.1 0.1 4913 units box\n";
// A few velocity-Verlet steps; velocities by position (loop geom), so the same on every grid.
std::string dynamics(double temperature, int steps)
{
  return "velocity all create " + std::to_string(temperature) + " 8812 loop geom\nfix nve all nve\ntimestep 0.002\n"
         "run " + std::to_string(steps) + " post no\n";
}

// ---- static cases: one evaluation, 1e-10 ---------------------------------------------------------

// A 2 x 2 x 2 cluster in one corner of a box 4 times wider: most ranks own nothing.
TEST(FaultMatrix, EmptyRanks)
{
  for (const Material& m : with_torch({argon(), copper_eam(), copper_mpnn()}, TorchModels::toy_and_sevennet)) {
    const std::string deck = header(m) + "region box block 0 8 0 8 0 8\ncreate_box 1 box\n"
                             "region corner block 0 2 0 2 0 2\ncreate_atoms 1 region corner\n" + m.mass + kDisplace;
    expect_same_as_one_rank("empty_ranks_" + m.name, deck + m.pair,
                            std::max(kStaticTolerance, m.tolerance_floor), 8 * m.lattice, m);
  }
}

// One atom in a box smaller than the cutoff: it interacts only with its own periodic images,
// which reach the other ranks as ghosts over several swaps.
TEST(FaultMatrix, OneAtomInTotal)
{
  for (const Material& m : with_torch({argon(), copper_eam(), copper_mpnn()}, TorchModels::toy_and_sevennet)) {
    const std::string deck = header(m) + "region box block 0 1.3 0 1.1 0 1.2\ncreate_box 1 box\n"
                             "create_atoms 1 single 0.3 0.4 0.5\n" + m.mass;
    expect_same_as_one_rank("one_atom_" + m.name, deck + m.pair, std::max(kStaticTolerance, m.tolerance_floor),
                            1.3 * m.lattice, m);
  }
}

// All atoms in the first eighth of the box along x on an N x 1 x 1 grid: rank 0 owns them all,
// the others hold only ghosts or nothing.
TEST(FaultMatrix, AllAtomsOnOneRank)
{
  for (const Material& m : with_torch({argon(), copper_mpnn()}, TorchModels::toy_and_sevennet)) {
    const std::string deck = header(m, "processors * 1 1\n") + "region box block 0 16 0 2 0 2\ncreate_box 1 box\n"
                             "region slab block 0 1.9 INF INF INF INF\ncreate_atoms 1 region slab\n" + m.mass + kDisplace;
    expect_same_as_one_rank("one_rank_owns_all_" + m.name, deck + m.pair,
                            std::max(kStaticTolerance, m.tolerance_floor), 16 * m.lattice, m);
  }
}

// Subdomains far thinner than the cutoff (N x 1 x 1 over 3 cells): ghosts come over many swaps.
TEST(FaultMatrix, VeryThinSubdomains)
{
  for (const Material& m : with_torch({argon(), copper_eam(), copper_mpnn()}, TorchModels::toy_and_sevennet)) {
    const std::string deck = header(m, "processors * 1 1\n") + "region box block 0 3 0 3 0 3\ncreate_box 1 box\n"
                             "create_atoms 1 box\n" + m.mass + kDisplace;
    expect_same_as_one_rank("thin_subdomains_" + m.name, deck + m.pair,
                            std::max(kStaticTolerance, m.tolerance_floor), 3 * m.lattice, m);
  }
}

// ---- dynamics: a few dozen steps, 1e-8 ----------------------------------------------------------

// Hot argon (5000 K) on thin subdomains, atoms exchanged and lists rebuilt every step: in 60
// steps atoms move ~2 A, about a subdomain's width on 8 ranks.
TEST(FaultMatrix, AtomsCrossSubdomainsEveryStep)
{
  const Material m = argon();
  const std::string deck = header(m, "processors * 1 1\n") + "region box block 0 3 0 3 0 3\ncreate_box 1 box\n"
                           "create_atoms 1 box\n" + m.mass + m.pair + "neighbor 1.0 bin\nneigh_modify every 1 delay 0 check no\n" +
                           dynamics(5000.0, 60);
  expect_same_as_one_rank("hot_crossing_lj", deck, kDynamicTolerance, 3 * m.lattice, m);
}

// fix balance moves subdomain walls while atoms of a half-filled box move.
TEST(FaultMatrix, FixBalanceDuringTheRun)
{
  for (const Material& m : with_torch({argon(), copper_eam()})) {
    const std::string deck = header(m, "processors * 1 1\n") + "region box block 0 6 0 2 0 2\ncreate_box 1 box\n"
                             "region half block 0 3 INF INF INF INF\ncreate_atoms 1 region half\n" + m.mass + m.pair +
                             "fix balance all balance 5 1.0 shift x 10 1.0\n" + dynamics(600.0, 30);
    expect_same_as_one_rank("fix_balance_" + m.name, deck, kDynamicTolerance,
                            6 * m.lattice, m);
  }
}

// write_restart, clear, read_restart, then pair_style and a new pair_coeff (distspec stores no
// restart information; `clear` unloads plugins, so the plugin is loaded again), and more steps.
TEST(FaultMatrix, RestartThenNewPairCoeff)
{
  const Material m = copper_eam();
  const std::string deck = header(m) + "region box block 0 3 0 3 0 3\ncreate_box 1 box\ncreate_atoms 1 box\n" + m.mass +
                           m.pair + dynamics(800.0, 10) + "write_restart @RUN@.restart\nclear\n" +
                           "plugin load " + dt::plugin_path() + "\nread_restart @RUN@.restart\n" + m.pair + "fix nve all nve\ntimestep 0.002\nrun 10 post no\n";
  expect_same_as_one_rank("restart_new_pair_coeff_eam", deck, kDynamicTolerance, 3 * m.lattice, m);
}

// `run N pre no post no` in a loop: no init between runs, reneighbouring as the run goes.
TEST(FaultMatrix, RunPreNoPostNoLoop)
{
  for (const Material& m : with_torch({argon(), copper_mpnn()})) {
    const std::string deck = header(m) + "region box block 0 3 0 3 0 3\ncreate_box 1 box\ncreate_atoms 1 box\n" + m.mass +
                             m.pair + "neigh_modify every 1 delay 0 check yes\n" + dynamics(900.0, 3) +
                             "run 3 pre no post no\nrun 3 pre no post no\nrun 3 pre no post no\nrun 3 pre no post no\n";
    expect_same_as_one_rank("run_pre_no_loop_" + m.name, deck, kDynamicTolerance,
                            3 * m.lattice, m);
  }
}

// Atoms deleted and created between runs: row counts and the atom map change under the model.
TEST(FaultMatrix, DeleteAndCreateAtomsBetweenRuns)
{
  const Material m = argon();
  const std::string deck = header(m) + "region box block 0 3 0 3 0 3\ncreate_box 1 box\ncreate_atoms 1 box\n" + m.mass +
                           m.pair + dynamics(300.0, 5) + "region hole sphere 1.5 1.5 1.5 0.8\n"
                           "delete_atoms region hole\nrun 5 post no\n"
                           "create_atoms 1 single 1.5 1.5 1.5\nrun 5 post no\n";
  expect_same_as_one_rank("delete_create_lj", deck, kDynamicTolerance, 3 * m.lattice, m);
}

}  // namespace
