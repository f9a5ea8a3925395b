/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec, the graph it gives the model: rows [owned | ghosts], species,
   and the edges of LAMMPS' neighbour list as the run plan lists them.
------------------------------------------------------------------------- */

#include "pair_distspec.h"

#include "atom.h"
#include "force.h"
#include "neigh_list.h"
#include "neighbor.h"

#include <algorithm>
#include <unordered_map>

using namespace LAMMPS_NS;

// Rows [owned | halo] = LAMMPS atoms [0, nlocal) and ghosts [nlocal, nlocal + nghost).
void PairDistspec::build_graph()
{
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const bool lists_rebuilt = neighbor_builds_.rebuilt(*neighbor);
  halo_->resize(nlocal, atom->nghost, neighbor_builds_.generation());
  dispatcher_->attach(*halo_);

  species_.resize(nall);
  const int *type = atom->type;
  for (int i = 0; i < nall; ++i) species_[i] = type_to_species_[type[i]];

  graph_.n_owned = nlocal;
  graph_.n_halo = atom->nghost;
  graph_.positions = (nall > 0 && plan_.inputs.positions) ? &atom->x[0][0] : nullptr;
  graph_.species = plan_.inputs.species ? species_.data() : nullptr;
  graph_.charges = (plan_.inputs.charges && atom->q_flag) ? atom->q : nullptr;

  timing_.lap(RunTiming::graph);
  // Charges are part of the topology a device model caches, and may change every step (fix qeq).
  if (lists_rebuilt) {
    rebuild_edges();
    timing_.lap(RunTiming::edges);
  } else if (plan_.charges_in_topology) graph_.topology_generation = ++topology_generation_;
}

// Each row's owned row on this rank, by atom ID (-1 where the atom is owned elsewhere), where the
// plan says the graph carries them (a serial model, newton on's ends).
void PairDistspec::rebuild_owner_rows()
{
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  std::unordered_map<tagint, int> owned;
  owned.reserve(nlocal);
  for (int i = 0; i < nlocal; ++i) owned.emplace(atom->tag[i], i);
  owner_rows_.resize(nall);
  for (int i = 0; i < nall; ++i) {
    const auto it = owned.find(atom->tag[i]);
    owner_rows_[i] = it == owned.end() ? -1 : it->second;
  }
  graph_.owner_rows = owner_rows_.data();
}

// Edge arrays from the full neighbour list, without atoms of NULL types (which hybrid skip
// lists leave out already, but a plain style would not).
void PairDistspec::rebuild_edges()
{
  // Expanded: ghosts are receivers too, each layer computed on them instead of exchanged.
  const int inum = list->inum + (plan_.expanded() ? list->gnum : 0);
  const int *ilist = list->ilist;
  receivers_.clear();
  senders_.clear();
  offsets_.assign(1, 0);
  receivers_.reserve(inum);
  for (int ii = 0; ii < inum; ++ii) {
    const int i = ilist[ii];
    if (species_[i] < 0) continue;
    const int *jlist = list->firstneigh[i];
    const int jnum = list->numneigh[i];
    receivers_.push_back(i);
    for (int jj = 0; jj < jnum; ++jj) {
      const int j = jlist[jj] & NEIGHMASK;
      if (species_[j] >= 0) senders_.push_back(j);
    }
    offsets_.push_back(static_cast<int>(senders_.size()));
  }
  point_graph_at_edges(receivers_.size(), receivers_.data(), offsets_.data(), senders_.data());
  if (plan_.newton_on_ends) order_newton_on_pairs_first(senders_.data());
  if (plan_.owner_rows) rebuild_owner_rows();
  edges_rebuilt();
}

void PairDistspec::point_graph_at_edges(std::size_t n_receivers, const int *receivers, const int *offsets,
                                        const int *senders)
{
  graph_.n_receivers = n_receivers;
  graph_.receivers = receivers;
  graph_.offsets = offsets;
  graph_.senders = senders;
  graph_.edge_list = plan_.edge_list;
  graph_.newton_on_ends = nullptr;
  graph_.owner_rows = nullptr;
}

void PairDistspec::edges_rebuilt()
{
  // Row counts, species and edges change only here: a device model uploads them only then.
  graph_.topology_generation = ++topology_generation_;
}

// Newton on's pairs first in each receiver's senders, as distspec::models::takes_newton_on_share
// splits them between ranks.
void PairDistspec::order_newton_on_pairs_first(int *senders)
{
  const int nlocal = atom->nlocal;
  const tagint *tag = atom->tag;
  double **x = atom->x;
  auto on_this_rank = [&](int i, int j) {
    return j < nlocal || distspec::models::takes_newton_on_share(tag[i], tag[j], x[i], x[j]);
  };
  newton_on_ends_rows_.resize(graph_.n_receivers);
  for (std::size_t r = 0; r < graph_.n_receivers; ++r) {
    const int i = graph_.receivers[r];
    int *first = senders + graph_.offsets[r], *last = senders + graph_.offsets[r + 1];
    int *mid = std::stable_partition(first, last, [&](int j) { return on_this_rank(i, j); });
    newton_on_ends_rows_[r] = static_cast<int>(mid - senders);
  }
  graph_.newton_on_ends = newton_on_ends_rows_.data();
}
