#include "models/plan/run_plan.h"

#include <algorithm>

namespace distspec::models {

const char* neighbor_request_name(NeighborRequest request) {
  switch (request) {
    case NeighborRequest::full: return "full";
    case NeighborRequest::half_newton_on: return "half (newton on)";
    case NeighborRequest::half_newton_off: return "half (newton off)";
  }
  return "?";
}

const char* halo_rows_name(HaloRows rows) {
  switch (rows) {
    case HaloRows::empty: return "empty";
    case HaloRows::zeroed: return "zeroed (owned-only)";
    case HaloRows::folded: return "folded by the style";
    case HaloRows::host_folds: return "folded by LAMMPS' reverse comm";
  }
  return "?";
}

namespace {

// Whether a pair's share left on a halo row comes back to its owner: forces by the host (newton_pair
// on), per-atom energy and virial by the style, none of them declared owned-only by the spec.
bool halo_shares_folded(const OutputPlan& outputs, const HostFacts& host) {
  return host.newton_pair && !outputs.forces_owned_only && !outputs.energy_rows_owned_only &&
         !outputs.virial_rows_owned_only;
}

// The edge list: a half list where the model takes one (as LAMMPS' own pair styles do) and the
// halo is per-layer; newton on's only where the halo rows' shares are folded.
EdgeList edge_list_for(const OutputPlan& outputs, const ModelInfo& info, const HostFacts& host, bool expanded) {
  if (expanded || !info.half_list || !host.takes_half_lists) return EdgeList::full;
  return *info.half_list == EdgeList::half_newton_on && halo_shares_folded(outputs, host) ? EdgeList::half_newton_on
                                                                                          : EdgeList::half_newton_off;
}

HaloRows rows_of(bool owned_only, bool halo_empty, bool host_folds) {
  if (owned_only) return HaloRows::zeroed;
  if (halo_empty) return HaloRows::empty;
  return host_folds ? HaloRows::host_folds : HaloRows::folded;
}

}  // namespace

RunPlan plan_run(const OutputPlan& outputs, const ModelInfo& info, const HostFacts& host, HaloStrategy halo) {
  RunPlan plan;
  plan.halo = halo;
  plan.outputs = outputs;
  plan.comm_width = std::max(info.comm_width, 6);
  plan.edge_list = edge_list_for(outputs, info, host, plan.expanded());
  const bool newton_off_list = plan.edge_list == EdgeList::half_newton_off;
  // Newton on's share of newton off's list: only where its halo-row partials are all folded.
  plan.newton_on_ends = newton_off_list && info.newton_on_forces && halo_shares_folded(outputs, host);
  plan.half_from_full = newton_off_list && host.newton_pair && host.half_lists_follow_newton_pair;
  plan.neighbor_list = plan.edge_list == EdgeList::full || plan.half_from_full ? NeighborRequest::full
                       : plan.edge_list == EdgeList::half_newton_on           ? NeighborRequest::half_newton_on
                                                                               : NeighborRequest::half_newton_off;
  // Whether the model leaves nothing on halo rows under this edge list.
  const bool halo_empty =
      !info.forces_on_halo_rows && plan.edge_list != EdgeList::half_newton_on && !plan.newton_on_ends;
  plan.owner_rows = info.needs_owner_rows || plan.newton_on_ends;
  plan.charges_in_topology = info.reads_charges && host.has_charges;
  plan.forces = rows_of(outputs.forces_owned_only, halo_empty, host.newton_pair);
  plan.energy_rows = rows_of(outputs.energy_rows_owned_only, halo_empty, false);
  plan.virial_rows = rows_of(outputs.virial_rows_owned_only, halo_empty, false);
  return plan;
}

bool takes_newton_on_share(long long id_i, long long id_j, const double* x_i, const double* x_j) {
  if (id_i != id_j) return ((id_i + id_j) % 2 == 0) == (id_i < id_j);
  for (int d = 2; d >= 0; --d)
    if (x_j[d] != x_i[d]) return x_j[d] > x_i[d];
  return false;
}

std::string RunPlan::describe() const {
  std::string s = std::string("edges: ") + edge_list_name(edge_list) + " from a " +
                  neighbor_request_name(neighbor_list) + " neighbour list" +
                  (newton_on_ends ? ", newton on's ends given" : "") + "\n";
  s += std::string("halo rows: forces ") + halo_rows_name(forces) + ", per-atom energy " +
       halo_rows_name(energy_rows) + ", per-atom virial " + halo_rows_name(virial_rows) + "\n";
  return s;
}

}  // namespace distspec::models
