// How a run is laid out: decided once, from the spec's output lists, the model's declared needs
// and a few facts of the host, never from the host itself, so that every pair style (plain,
// KOKKOS) applies the same plan and the plan is unit-tested as a table without a host.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "models/model.h"
#include "models/plan/output_plan.h"

namespace distspec::models {

// What the host knows about the run that the binding rules and the plan need (LAMMPS: units,
// atom style, boundary, special_bonds, newton_pair, the pair_style words, the execution space).
struct HostFacts {
  std::string units;                          // the run's units style
  int n_ranks = 1;
  bool has_charges = false;                   // the atom style carries a charge per atom
  std::string atom_style;                     // for messages
  std::array<bool, 3> periodic{true, true, true};
  std::string boundary;                       // for messages, as the host spells it
  bool bonds_scale_coulomb = false;           // bonded pairs whose Coulomb term is excluded or scaled
  std::string special_coul;                   // for messages
  HaloStrategy halo = HaloStrategy::per_layer;  // as asked for
  bool strict = false;                        // helper records without native meaning are errors
  // Ghost partials of forces are folded onto their owners by the host's own reverse comm.
  bool newton_pair = true;
  // The kernels of the host's execution space can walk a half list (KOKKOS' CUDA kernels walk
  // full lists, without atomics).
  bool takes_half_lists = true;
  // Half lists are built as newton_pair says, whatever the request (KOKKOS): newton off's pairs
  // under newton_pair on then come from a full list.
  bool half_lists_follow_newton_pair = false;
};

// The neighbour list the host is asked for, which the edges come from.
enum class NeighborRequest {
  full,
  half_newton_on,   // half, as newton_pair on lists pairs across ranks
  half_newton_off,  // half with every pair of an owned and a ghost atom, whatever newton_pair says
};

// What becomes of a per-atom output's halo rows before its owned rows reach the host.
enum class HaloRows {
  empty,       // the model leaves nothing there: dropped, nothing to fold
  zeroed,      // the spec declares the output owned-only: exact on owned rows, halo rows zeroed
  folded,      // the style's reverse exchange adds them onto their owners
  host_folds,  // handed to the host with its ghost rows (forces under newton_pair on: LAMMPS' reverse comm)
};

const char* neighbor_request_name(NeighborRequest request);
const char* halo_rows_name(HaloRows rows);

// The one rule both pair styles apply to a per-atom output's rows, whatever memory they are in:
// the style's reverse exchange folds them first where they are `folded`; then every row reaches
// the host where it folds them itself (`host_folds`), and else the owned rows only. Zeroed and
// empty halo rows are never read, so neither style writes them.
inline bool folded_by_style(HaloRows rows) { return rows == HaloRows::folded; }
inline int rows_to_host(HaloRows rows, int n_owned, int n_rows) {
  return rows == HaloRows::host_folds ? n_rows : n_owned;
}

struct RunPlan {
  // The halo strategy that runs: expanded only when asked for and the model has layers to
  // expand (for one layer both strategies are the same computation).
  HaloStrategy halo = HaloStrategy::per_layer;
  int comm_width = 6;  // the widest row one exchange carries: features, or a per-atom virial fold
  EdgeList edge_list = EdgeList::full;
  NeighborRequest neighbor_list = NeighborRequest::full;
  bool half_from_full = false;  // the edges are newton off's half list of a full list (its pairs j > i)
  bool newton_on_ends = false;  // the graph gives each receiver's end of newton on's pairs
  // The per-atom inputs the host fills on every row (AtomGraph::positions, species, charges):
  // those the spec's shard_fields promote, or, for a model of plain rows
  // (ModelInfo::plain_input_rows), positions and species always and charges if it reads them.
  struct Inputs {
    bool positions = true, species = true, charges = false;
  } inputs;
  // The graph carries each row's owned row on this rank (AtomGraph::owner_rows): a serial model
  // maps halo rows onto their owners (ModelInfo::needs_owner_rows), and newton on's ends take a
  // pair with a periodic image of the rank's own atom once.
  bool owner_rows = false;
  // Charges are part of the topology a device model caches: a new topology generation every step,
  // not only at a reneighbouring, since charges may change between (fix qeq).
  bool charges_in_topology = false;
  HaloRows forces = HaloRows::empty;
  HaloRows energy_rows = HaloRows::empty;
  HaloRows virial_rows = HaloRows::empty;
  OutputPlan outputs;
  std::vector<std::string> warnings;  // what the host should report and run on regardless

  bool expanded() const { return halo == HaloStrategy::expanded; }
  // What the log says of the plan.
  std::string describe() const;
};

// The layout of a run of `info` with `outputs` under `host`, the halo strategy decided.
RunPlan plan_run(const OutputPlan& outputs, const ModelInfo& info, const HostFacts& host, HaloStrategy halo);

// Of a pair of an owned atom i and a halo atom j of newton off's list, whether newton on's share
// of it is i's rank's (RunPlan::newton_on_ends). Decided the same way on both ranks of the pair,
// from the two atom IDs alone (exact on both): the lower ID's where the IDs' sum is even, the
// higher's where it is odd, so that the pairs a subdomain boundary cuts are split evenly between
// its two ranks even where IDs follow position (as create_atoms and most data files number
// atoms); for an atom and its own periodic image (equal IDs), the image above it (z, then y,
// then x). Pairs of two owned atoms are in a half list once already, and are always taken.
bool takes_newton_on_share(long long id_i, long long id_j, const double* x_i, const double* x_j);

}  // namespace distspec::models
