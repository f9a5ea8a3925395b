// The run plan as a decision table: newton_pair x the model's half list and needs x owned-only
// outputs x the execution space x the halo strategy, each row against the layout it must give
// (worked out from LAMMPS' rules, not from the planner). Then the shipped models through
// bind_model, and invariants over every combination.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "models/plan/run_plan.h"
#include "models/plan/spec_binding.h"

namespace distspec {
namespace {

using models::EdgeList;
using models::HaloRows;
using models::NeighborRequest;

enum class Space { plain, kk_host, kk_device };
enum class Owned { none, forces, energy_rows, virial_rows };

// A model's declared needs, as its kind fills ModelInfo.
struct Needs {
  const char* name;
  std::optional<EdgeList> half_list;
  bool newton_on_forces = false;
  bool forces_on_halo_rows = false;
  bool reads_charges = false;
  bool needs_owner_rows = false;
};
const Needs kPair{"pair (LJ)", EdgeList::half_newton_on};
const Needs kEam{"EAM", EdgeList::half_newton_off, true};
const Needs kMessagePassing{"message passing", std::nullopt, false, true};
const Needs kCharges{"reads charges", std::nullopt, false, true, true};
const Needs kSerial{"serial (SevenNet's own module)", std::nullopt, false, false, false, true};

struct Row {
  Needs model;
  bool newton_pair;
  Owned owned;
  Space space;
  bool expanded;
  // The plan it must give.
  EdgeList edge_list;
  NeighborRequest request;
  bool half_from_full;
  bool newton_on_ends;
  HaloRows forces, energy_rows, virial_rows;
  bool owner_rows;  // the graph carries each row's owned row
  bool charges;     // charges are part of the topology (refreshed every step)
};

models::HostFacts host_of(const Row& row) {
  models::HostFacts host;
  host.newton_pair = row.newton_pair;
  host.takes_half_lists = row.space != Space::kk_device;
  host.half_lists_follow_newton_pair = row.space != Space::plain;
  host.has_charges = true;  // an atom style with charges: whether the graph's topology holds them is the model's
  return host;
}

models::OutputPlan outputs_of(Owned owned) {
  models::OutputPlan outputs;
  outputs.forces_owned_only = owned == Owned::forces;
  outputs.energy_rows_owned_only = owned == Owned::energy_rows;
  outputs.virial_rows_owned_only = owned == Owned::virial_rows;
  return outputs;
}

models::ModelInfo info_of(const Needs& needs) {
  models::ModelInfo info;
  info.half_list = needs.half_list;
  info.newton_on_forces = needs.newton_on_forces;
  info.forces_on_halo_rows = needs.forces_on_halo_rows;
  info.reads_charges = needs.reads_charges;
  info.needs_owner_rows = needs.needs_owner_rows;
  info.comm_width = 3;
  return info;
}

models::RunPlan plan_of(const Row& row) {
  return models::plan_run(outputs_of(row.owned), info_of(row.model), host_of(row),
                          row.expanded ? HaloStrategy::expanded : HaloStrategy::per_layer);
}

constexpr bool on = true, off = false;
constexpr auto E = HaloRows::empty, Z = HaloRows::zeroed, F = HaloRows::folded, H = HaloRows::host_folds;
constexpr auto full = EdgeList::full, half_on = EdgeList::half_newton_on, half_off = EdgeList::half_newton_off;
constexpr auto req_full = NeighborRequest::full, req_on = NeighborRequest::half_newton_on,
               req_off = NeighborRequest::half_newton_off;

// clang-format off
const Row kTable[] = {
  // A pair potential takes newton on's half list where LAMMPS folds ghost forces and no output
  // is owned-only; its ghost partials then go to LAMMPS (forces) or the style's fold (per atom).
  {kPair, on,  Owned::none,        Space::plain,     off, half_on,  req_on,   false, false, H, F, F, false, false},
  // newton off: every rank lists each owned-ghost pair; each rank computes its owned side only,
  // so nothing lands on halo rows.
  {kPair, off, Owned::none,        Space::plain,     off, half_off, req_off,  false, false, E, E, E, false, false},
  // An owned-only output cannot be folded: newton off's pairs, nothing on halo rows but zeros.
  {kPair, on,  Owned::forces,      Space::plain,     off, half_off, req_off,  false, false, Z, E, E, false, false},
  {kPair, on,  Owned::energy_rows, Space::plain,     off, half_off, req_off,  false, false, E, Z, E, false, false},
  {kPair, on,  Owned::virial_rows, Space::plain,     off, half_off, req_off,  false, false, E, E, Z, false, false},
  // KOKKOS on the host builds newton on's half list under newton_pair on.
  {kPair, on,  Owned::none,        Space::kk_host,   off, half_on,  req_on,   false, false, H, F, F, false, false},
  {kPair, off, Owned::none,        Space::kk_host,   off, half_off, req_off,  false, false, E, E, E, false, false},
  // KOKKOS' device kernels walk full lists: each pair twice, nothing on halo rows.
  {kPair, on,  Owned::none,        Space::kk_device, off, full,     req_full, false, false, E, E, E, false, false},
  {kPair, off, Owned::none,        Space::kk_device, off, full,     req_full, false, false, E, E, E, false, false},
  // Expanded halo: ghosts are receivers too, over the full list.
  {kPair, on,  Owned::none,        Space::plain,     on,  full,     req_full, false, false, E, E, E, false, false},
  // EAM takes newton off's list; under newton_pair on it computes newton on's share of it, whose
  // ends the graph gives, and leaves ghost partials that are folded.
  // Newton on's ends come with each row's owner: a pair with an image of the rank's own atom is
  // taken once.
  {kEam,  on,  Owned::none,        Space::plain,     off, half_off, req_off,  false, true,  H, F, F, true,  false},
  {kEam,  off, Owned::none,        Space::plain,     off, half_off, req_off,  false, false, E, E, E, false, false},
  {kEam,  on,  Owned::energy_rows, Space::plain,     off, half_off, req_off,  false, false, E, Z, E, false, false},
  {kEam,  on,  Owned::forces,      Space::plain,     off, half_off, req_off,  false, false, Z, E, E, false, false},
  // KOKKOS under newton_pair on builds only newton on's half list: newton off's comes from a full one.
  {kEam,  on,  Owned::none,        Space::kk_host,   off, half_off, req_full, true,  true,  H, F, F, true,  false},
  {kEam,  off, Owned::none,        Space::kk_host,   off, half_off, req_off,  false, false, E, E, E, false, false},
  {kEam,  on,  Owned::none,        Space::kk_device, off, full,     req_full, false, false, E, E, E, false, false},
  // Message passing: full lists, features of halo rows carry gradients back to their owners.
  {kMessagePassing, on,  Owned::none,   Space::plain,     off, full, req_full, false, false, H, F, F, false, false},
  {kMessagePassing, off, Owned::none,   Space::plain,     off, full, req_full, false, false, F, F, F, false, false},
  {kMessagePassing, on,  Owned::forces, Space::plain,     off, full, req_full, false, false, Z, F, F, false, false},
  {kMessagePassing, off, Owned::forces, Space::plain,     off, full, req_full, false, false, Z, F, F, false, false},
  {kMessagePassing, on,  Owned::none,   Space::kk_device, off, full, req_full, false, false, H, F, F, false, false},
  {kMessagePassing, on,  Owned::none,   Space::plain,     on,  full, req_full, false, false, H, F, F, false, false},
  // A model that reads charges (Ewald, PME): they are part of its topology, refreshed every step.
  {kCharges, on,  Owned::none,   Space::plain,     off, full, req_full, false, false, H, F, F, false, true},
  {kCharges, off, Owned::none,   Space::kk_device, off, full, req_full, false, false, F, F, F, false, true},
  // A serial model maps halo rows onto their owners instead of reading them: nothing on halo rows.
  {kSerial,  on,  Owned::none,   Space::plain,     off, full, req_full, false, false, E, E, E, true,  false},
  {kSerial,  on,  Owned::none,   Space::kk_device, off, full, req_full, false, false, E, E, E, true,  false},
};
// clang-format on

const char* space_name(Space s) { return s == Space::plain ? "plain" : s == Space::kk_host ? "kk host" : "kk device"; }
const char* owned_name(Owned o) {
  return o == Owned::none ? "-" : o == Owned::forces ? "forces" : o == Owned::energy_rows ? "energy rows" : "virial rows";
}

std::string describe(const Row& row) {
  return std::string(row.model.name) + ", newton " + (row.newton_pair ? "on" : "off") + ", owned-only " +
         owned_name(row.owned) + ", " + space_name(row.space) + (row.expanded ? ", expanded" : "");
}

TEST(RunPlan, EveryRowOfTheDecisionTable) {
  for (const Row& row : kTable) {
    const models::RunPlan plan = plan_of(row);
    SCOPED_TRACE(describe(row) + ": " + plan.describe());
    EXPECT_EQ(plan.edge_list, row.edge_list);
    EXPECT_EQ(plan.neighbor_list, row.request);
    EXPECT_EQ(plan.half_from_full, row.half_from_full);
    EXPECT_EQ(plan.newton_on_ends, row.newton_on_ends);
    EXPECT_EQ(plan.forces, row.forces);
    EXPECT_EQ(plan.energy_rows, row.energy_rows);
    EXPECT_EQ(plan.virial_rows, row.virial_rows);
    EXPECT_EQ(plan.owner_rows, row.owner_rows);
    EXPECT_EQ(plan.charges_in_topology, row.charges);
    EXPECT_EQ(plan.expanded(), row.expanded);
  }
}

TEST(RunPlan, CommWidthIsTheWidestRowAndAtLeastAVirialFold) {
  models::ModelInfo info;
  info.comm_width = 16;
  EXPECT_EQ(models::plan_run({}, info, {}, HaloStrategy::per_layer).comm_width, 16);
  info.comm_width = 1;
  EXPECT_EQ(models::plan_run({}, info, {}, HaloStrategy::per_layer).comm_width, 6);
}

// Both pair styles apply one rule to an output's rows: the style folds `folded` rows, LAMMPS gets
// every row of `host_folds` rows, and only the owned rows of the rest (zeroed and empty halo rows
// are never read).
TEST(RunPlan, OneRuleForAnOutputsRowsInBothStyles) {
  const int n_owned = 5, n_rows = 12;
  EXPECT_EQ(models::rows_to_host(HaloRows::host_folds, n_owned, n_rows), n_rows);
  for (HaloRows rows : {HaloRows::empty, HaloRows::zeroed, HaloRows::folded}) {
    SCOPED_TRACE(models::halo_rows_name(rows));
    EXPECT_EQ(models::rows_to_host(rows, n_owned, n_rows), n_owned);
    EXPECT_EQ(models::folded_by_style(rows), rows == HaloRows::folded);
  }
  EXPECT_FALSE(models::folded_by_style(HaloRows::host_folds));
}

// Over every combination: what LAMMPS and KOKKOS can do bounds what the plan may ask for.
TEST(RunPlan, InvariantsOverEveryCombination) {
  for (const Needs& model : {kPair, kEam, kMessagePassing, kCharges, kSerial})
    for (bool newton_pair : {true, false})
      for (Owned owned : {Owned::none, Owned::forces, Owned::energy_rows, Owned::virial_rows})
        for (Space space : {Space::plain, Space::kk_host, Space::kk_device})
          for (bool expanded : {false, true}) {
            const Row row{model, newton_pair, owned, space, expanded, full, req_full, false, false, E, E, E, false, false};
            const models::RunPlan plan = plan_of(row);
            SCOPED_TRACE(describe(row) + ": " + plan.describe());
            if (space == Space::kk_device || expanded || !model.half_list) EXPECT_EQ(plan.edge_list, EdgeList::full);
            if (plan.edge_list == EdgeList::full) EXPECT_EQ(plan.neighbor_list, NeighborRequest::full);
            // Only LAMMPS folds f's ghost rows, and only under newton_pair on.
            if (!newton_pair) EXPECT_NE(plan.forces, HaloRows::host_folds);
            if (newton_pair) EXPECT_NE(plan.forces, HaloRows::folded);
            // Newton on's shares land on halo rows: never with an output that cannot be folded.
            if (owned != Owned::none) {
              EXPECT_NE(plan.edge_list, EdgeList::half_newton_on);
              EXPECT_FALSE(plan.newton_on_ends);
            }
            if (owned == Owned::forces) EXPECT_EQ(plan.forces, HaloRows::zeroed);
            if (owned == Owned::energy_rows) EXPECT_EQ(plan.energy_rows, HaloRows::zeroed);
            if (owned == Owned::virial_rows) EXPECT_EQ(plan.virial_rows, HaloRows::zeroed);
            if (plan.half_from_full) EXPECT_NE(space, Space::plain);
          }
}

// The shipped models' own declared needs, through bind_model as LAMMPS' glue calls it.
TEST(RunPlan, ShippedModelsGetTheirLists) {
  auto plan_for = [](const std::string& name, bool newton_pair) {
    const models::ModelFile file = models::read_model_file(std::string(DISTSPEC_POTENTIALS_DIR) + "/" + name);
    models::HostFacts host;
    host.units = "metal";
    host.n_ranks = 2;
    host.newton_pair = newton_pair;
    return models::bind_model(file, models::make_model(file)->info(), host);
  };
  EXPECT_EQ(plan_for("lj_argon.json", true).edge_list, EdgeList::half_newton_on);
  EXPECT_EQ(plan_for("lj_argon.json", false).edge_list, EdgeList::half_newton_off);
  const models::RunPlan eam = plan_for("cu_eam_u3.json", true);
  EXPECT_EQ(eam.edge_list, EdgeList::half_newton_off);
  EXPECT_TRUE(eam.newton_on_ends);
  const models::RunPlan mpnn = plan_for("cu_mpnn_L2.json", false);
  EXPECT_EQ(mpnn.edge_list, EdgeList::full);
  EXPECT_EQ(mpnn.forces, HaloRows::folded);
}

// Each pair a subdomain boundary cuts is taken by exactly one of its two ranks (each sees the
// other's atom as a ghost), and about half by each where IDs follow position.
TEST(RunPlan, NewtonOnSharesAreTakenOnceAndSplitEvenly) {
  const double a[3] = {0.0, 0.0, 0.0}, b[3] = {1.0, 0.0, 0.0};
  int taken_by_lower = 0, pairs = 0;
  for (long long i = 1; i <= 200; ++i)
    for (long long j = i + 1; j <= i + 7; ++j) {
      const bool on_i = models::takes_newton_on_share(i, j, a, b), on_j = models::takes_newton_on_share(j, i, b, a);
      EXPECT_NE(on_i, on_j) << i << " " << j;
      taken_by_lower += on_i;
      ++pairs;
    }
  EXPECT_NEAR(static_cast<double>(taken_by_lower) / pairs, 0.5, 0.1);
  // An atom and its own periodic image: the image above it, in z first.
  const double above_z[3] = {-3.0, 0.0, 5.0}, above_y[3] = {0.0, 2.0, 0.0};
  EXPECT_TRUE(models::takes_newton_on_share(9, 9, a, above_z));
  EXPECT_FALSE(models::takes_newton_on_share(9, 9, above_z, a));
  EXPECT_TRUE(models::takes_newton_on_share(9, 9, a, above_y));
  EXPECT_FALSE(models::takes_newton_on_share(9, 9, above_y, a));
}

}  // namespace
}  // namespace distspec
