/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec/kk.

   compute() is the plain style's three steps on Kokkos views: build the graph (kernels promote
   the shard_fields and, after a reneighbouring, rebuild the edge arrays from KOKKOS' list),
   run the model through the spec's dispatcher (halo refreshes through the comm callbacks
   below), write energy, forces and virial into atomKK's views as the spec classifies them.
------------------------------------------------------------------------- */

#include "pair_distspec_kokkos.h"

#include "atom_kokkos.h"
#include "atom_masks.h"
#include "error.h"
#include "force.h"
#include "memory_kokkos.h"
#include "neigh_list_kokkos.h"
#include "neighbor.h"

#include "distspec/error.h"
#include "finite_outputs.h"

#include <algorithm>
#include <cmath>

using namespace LAMMPS_NS;

namespace {

// Edge arrays grow with room to spare, so that small changes in neighbour counts between
// reneighbourings do not reallocate them (as pair_nequip_allegro pads its scratch buffers).
constexpr double kGrowthPadding = 1.2;

template <class View> void grow_to(View &view, std::size_t n, const char *label, double padding = 1.0)
{
  if (view.extent(0) >= n) return;
  view = View(Kokkos::ViewAllocateWithoutInitializing(label), static_cast<std::size_t>(n * padding));
}

}    // namespace

/* ---------------------------------------------------------------------- */

template <class DeviceType>
PairDistspecKokkos<DeviceType>::PairDistspecKokkos(LAMMPS *lmp) : PairDistspec(lmp)
{
  kokkosable = 1;
  style_name_ = "distspec/kk";
  // KOKKOS builds half lists as newton_pair says, whatever the request; its CUDA kernels here
  // walk full lists (without atomics).
  space_takes_half_lists_ = kHostKernels;
  half_lists_follow_newton_pair_ = true;
  atomKK = static_cast<AtomKokkos *>(atom);
  execution_space = ExecutionSpaceFromDevice<DeviceType>::space;
  datamask_read = X_MASK | F_MASK | TYPE_MASK | Q_MASK | ENERGY_MASK | VIRIAL_MASK;
  datamask_modify = F_MASK | ENERGY_MASK | VIRIAL_MASK;
}

template <class DeviceType> PairDistspecKokkos<DeviceType>::~PairDistspecKokkos()
{
  // Pair's destructor frees eatom / vatom with memory->destroy: hand them to memoryKK first.
  memoryKK->destroy_kokkos(k_eatom, eatom);
  memoryKK->destroy_kokkos(k_vatom, vatom);
}

/* ----------------------------------------------------------------------
   Under KOKKOS the execution space decides where the model runs
------------------------------------------------------------------------- */

template <class DeviceType> void PairDistspecKokkos<DeviceType>::check_device() const
{
  if (settings_.device == distspec::Device::cuda && kHostKernels)
    error->all(FLERR,
               "pair_style distspec/kk: device cuda, but this Kokkos execution space ({}) runs on the host; with "
               "-sf kk the model runs where Kokkos runs: drop the device keyword, or use a LAMMPS whose KOKKOS "
               "package is built for CUDA",
               DeviceType::execution_space::name());
#ifndef DISTSPEC_WITH_CUDA
  if (!kHostKernels)
    error->all(FLERR,
               "pair_style distspec/kk: the Kokkos execution space {} keeps atom data in GPU memory, and this "
               "DISTSPEC plugin has no CUDA kernels; rebuild it with -DDISTSPEC_ENABLE_CUDA=ON, or run "
               "distspec/kk/host or the plain distspec style",
               DeviceType::execution_space::name());
#endif
}

// Kokkos already chose this rank's GPU (-k on g N): the CUDA kernels run on the current device.
template <class DeviceType> distspec::Device PairDistspecKokkos<DeviceType>::model_device() const
{
  return kHostKernels ? distspec::Device::cpu : distspec::Device::cuda;
}

// Feature rows in Kokkos views, packed by Kokkos kernels on either of LAMMPS' comm paths.
template <class DeviceType> std::unique_ptr<LammpsHaloExchangeBase> PairDistspecKokkos<DeviceType>::make_halo_exchange()
{
  auto halo = std::make_unique<LammpsHaloExchangeKokkos<DeviceType>>(lmp, this);
  halo_kk_ = halo.get();
  return halo;
}

/* ---------------------------------------------------------------------- */

template <class DeviceType> void PairDistspecKokkos<DeviceType>::init_style()
{
  // Where the model's kernels run follows the Kokkos execution space (model_device()): the
  // dispatcher binds the host or the CUDA kernels to the views' raw pointers.
  PairDistspec::init_style();
  // The plain style asked for the run plan's list whatever `-pk kokkos neigh` says, so `newton on neigh half`, which recent KOKKOS
  // requires, works; KOKKOS builds it on DeviceType.
  distspec_compat::build_request_with_kokkos<DeviceType>(neighbor, this);

  promote_positions_ = plan_.inputs.positions;
  promote_species_ = plan_.inputs.species;
  promote_charges_ = plan_.inputs.charges && atom->q_flag;

  // The species of each LAMMPS type, as pair_coeff mapped them.
  const int ntypes = atom->ntypes;
  DAT::tdual_int_1d k_type_to_species("DistSpec::PairDistspecKokkos::type_to_species", ntypes + 1);
  for (int t = 0; t <= ntypes; ++t) k_type_to_species.h_view(t) = type_to_species_[t];
  k_type_to_species.modify<LMPHostType>();
  k_type_to_species.sync<DeviceType>();
  d_type_to_species_ = k_type_to_species.view<DeviceType>();

  // In GPU memory the model's rows stay there: forces, per-atom energy and virial go from the
  // model's device buffers into atomKK's views without crossing PCIe.
  rows_on_device_ = !kHostKernels;
}

/* ---------------------------------------------------------------------- */

template <class DeviceType> void PairDistspecKokkos<DeviceType>::compute(int eflag, int vflag)
{
  // Per-atom energy and virial are Kokkos views of this style (alloc = 0): see write_back_views.
  ev_init(eflag, vflag, 0);
  timing_.begin_step();
  atomKK->sync(execution_space, datamask_read);

  // Graph: rows [owned | halo] = atoms [0, nlocal) and ghosts [nlocal, nlocal + nghost).
  const bool lists_rebuilt = neighbor_builds_.rebuilt(*neighbor);
  halo_->resize(atom->nlocal, atom->nghost, neighbor_builds_.generation());
  dispatcher_->attach(*halo_);
  promote_shard_fields();
  if (lists_rebuilt) rebuild_edge_arrays();
  // Charges are part of the topology a device model caches, and may change every step (fix qeq).
  else if (plan_.charges_in_topology) graph_.topology_generation = ++topology_generation_;
  // The model's kernels read the rows next, host kernels or CUDA kernels on their own stream.
  DeviceType().fence();
  timing_.lap(RunTiming::graph);    // `timing yes`: promotion and edge rebuild together

  // Model: its kernels get raw pointers of the views; halo refreshes come back through the comm
  // callbacks.
  run_model("distspec/kk");
  // KOKKOS fills its own list views, not NeighList's host arrays: no closest pair is named. At
  // once on the steps LAMMPS reads the energy or virial; else agreed at the next step, with this
  // step's non-finite forces zeroed meanwhile (finite_outputs.h).
  // The forces in DeviceType memory are checked on its threads; a CPU model's under a device
  // space on the host.
  const bool on_device = model_outputs_.rows_on_device();
  const std::size_t n_forces = 3 * graph_.n_rows();
  double *forces = on_device ? model_outputs_.device.forces : model_outputs_.forces.data();
  const bool on_space = on_device || kHostKernels;
  const bool finite =
      std::isfinite(model_outputs_.energy) && (on_space ? forces_finite(forces) : all_finite(forces, n_forces));
  if (finite_check_.check(lmp, host_neighbor_list(), finite, eflag || vflag, finite_check_subject())) {
    if (on_space) zero_non_finite_forces(forces);
    else zero_non_finite(forces, n_forces);
  }
  timing_.lap(RunTiming::checks);

  write_back_views();
  atomKK->modified(execution_space, (eflag || vflag) ? datamask_modify : F_MASK);
  timing_.end_step(*dispatcher_);
  if (report_pending_) log_halo_report();
}

// Whether every force component the model left is finite: one reduction, one integer back to
// the host.
template <class DeviceType> bool PairDistspecKokkos<DeviceType>::forces_finite(const double *data) const
{
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const Kokkos::View<const double *, DeviceType, Unmanaged> forces(data, 3 * graph_.n_rows());
  int non_finite = 0;
  Kokkos::parallel_reduce(
      "DistSpec::PairDistspecKokkos::finite_forces", Kokkos::RangePolicy<DeviceType>(0, forces.extent(0)),
      // v - v is 0 for every finite v and NaN for inf and NaN.
      KOKKOS_LAMBDA(const std::size_t k, int &bad) { bad += (forces(k) - forces(k) == 0.0) ? 0 : 1; }, non_finite);
  return non_finite == 0;
}

// Non-finite force components set to 0.
template <class DeviceType> void PairDistspecKokkos<DeviceType>::zero_non_finite_forces(double *data)
{
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const Kokkos::View<double *, DeviceType, Unmanaged> forces(data, 3 * graph_.n_rows());
  Kokkos::parallel_for(
      "DistSpec::PairDistspecKokkos::zero_non_finite_forces", Kokkos::RangePolicy<DeviceType>(0, forces.extent(0)),
      KOKKOS_LAMBDA(const std::size_t k) {
        if (!(forces(k) - forces(k) == 0.0)) forces(k) = 0.0;
      });
  DeviceType().fence();
}

// x, species and q of every row into the model's input views.
template <class DeviceType> void PairDistspecKokkos<DeviceType>::promote_shard_fields()
{
  const int nall = atom->nlocal + atom->nghost;
  grow_atom_views();

  auto x = atomKK->k_x.template view<DeviceType>();
  auto type = atomKK->k_type.template view<DeviceType>();
  auto positions = d_positions_;
  auto species = d_species_;
  auto type_to_species = d_type_to_species_;
  const bool copy_positions = promote_positions_;
  // Species are always needed: they decide which rows are this model's atoms (NULL types).
  Kokkos::parallel_for(
      "DistSpec::PairDistspecKokkos::promote_positions_species", Kokkos::RangePolicy<DeviceType>(0, nall),
      KOKKOS_LAMBDA(const int i) {
        species(i) = type_to_species(type(i));
        if (copy_positions)
          for (int c = 0; c < 3; ++c) positions(i, c) = x(i, c);
      });

  if (promote_charges_) {
    auto q = atomKK->k_q.template view<DeviceType>();
    auto charges = d_charges_;
    Kokkos::parallel_for(
        "DistSpec::PairDistspecKokkos::promote_charges", Kokkos::RangePolicy<DeviceType>(0, nall),
        KOKKOS_LAMBDA(const int i) { charges(i) = q(i); });
  }

  graph_.n_owned = atom->nlocal;
  graph_.n_halo = atom->nghost;
  graph_.positions = (nall > 0 && promote_positions_) ? d_positions_.data() : nullptr;
  graph_.species = promote_species_ ? d_species_.data() : nullptr;
  graph_.charges = promote_charges_ ? d_charges_.data() : nullptr;
}

// The input rows cover every atom LAMMPS may hold (atom->nmax); they grow with it.
template <class DeviceType> void PairDistspecKokkos<DeviceType>::grow_atom_views()
{
  const std::size_t nmax = atom->nmax;
  grow_to(d_species_, nmax, "DistSpec::PairDistspecKokkos::species");
  if (promote_positions_) grow_to(d_positions_, nmax, "DistSpec::PairDistspecKokkos::positions");
  if (promote_charges_) grow_to(d_charges_, nmax, "DistSpec::PairDistspecKokkos::charges");
}

// CSR edge arrays from KOKKOS' neighbour list (as the run plan asked for it), without
// atoms of NULL types (which hybrid skip lists leave out already, but a plain style would not).
template <class DeviceType> void PairDistspecKokkos<DeviceType>::rebuild_edge_arrays()
{
  auto *k_list = static_cast<NeighListKokkos<DeviceType> *>(list);
  // Expanded: ghosts are receivers too, each layer computed on them instead of exchanged.
  const int inum = list->inum + (plan_.expanded() ? list->gnum : 0);
  auto ilist = k_list->d_ilist;
  auto numneigh = k_list->d_numneigh;
  auto neighbors = k_list->d_neighbors;
  auto species = d_species_;
  // Newton off's half list from a full one: of each pair, the direction j > i.
  const bool only_j_above_i = plan_.half_from_full;

  grow_to(d_receivers_, inum, "DistSpec::PairDistspecKokkos::receivers", kGrowthPadding);
  grow_to(d_offsets_, inum + 1, "DistSpec::PairDistspecKokkos::offsets", kGrowthPadding);
  auto receivers = d_receivers_;
  auto offsets = d_offsets_;

  // Receivers: the list's atoms of this model's types, in list order.
  int n_receivers = 0;
  Kokkos::parallel_scan(
      "DistSpec::PairDistspecKokkos::receivers", Kokkos::RangePolicy<DeviceType>(0, inum),
      KOKKOS_LAMBDA(const int ii, int &slot, const bool final) {
        const int i = ilist(ii);
        if (species(i) < 0) return;
        if (final) receivers(slot) = i;
        ++slot;
      },
      n_receivers);

  // Offsets: each receiver's first edge, counting senders of this model's types; the extra
  // last element holds the edge count.
  int n_edges = 0;
  Kokkos::parallel_scan(
      "DistSpec::PairDistspecKokkos::offsets", Kokkos::RangePolicy<DeviceType>(0, n_receivers + 1),
      KOKKOS_LAMBDA(const int r, int &edge, const bool final) {
        if (final) offsets(r) = edge;
        if (r == n_receivers) return;
        const int i = receivers(r);
        const int jnum = numneigh(i);
        for (int jj = 0; jj < jnum; ++jj) {
          const int j = neighbors(i, jj) & NEIGHMASK;
          if (species(j) >= 0 && (!only_j_above_i || j > i)) ++edge;
        }
      },
      n_edges);

  // Senders, in neighbour-list order within each receiver.
  grow_to(d_senders_, n_edges, "DistSpec::PairDistspecKokkos::senders", kGrowthPadding);
  auto senders = d_senders_;
  Kokkos::parallel_for(
      "DistSpec::PairDistspecKokkos::senders", Kokkos::RangePolicy<DeviceType>(0, n_receivers),
      KOKKOS_LAMBDA(const int r) {
        const int i = receivers(r);
        const int jnum = numneigh(i);
        int e = offsets(r);
        for (int jj = 0; jj < jnum; ++jj) {
          const int j = neighbors(i, jj) & NEIGHMASK;
          if (species(j) >= 0 && (!only_j_above_i || j > i)) senders(e++) = j;
        }
      });

  point_graph_at_edges(n_receivers, d_receivers_.data(), d_offsets_.data(), d_senders_.data());
  // Host memory (a host space: half lists are for those only), so the plain style's ordering runs
  // on the views as they are.
  if (plan_.newton_on_ends) {
    DeviceType().fence();
    order_newton_on_pairs_first(d_senders_.data());
  }
  if (plan_.owner_rows) rebuild_owner_rows_view();
  edges_rebuilt();
}

// The owner rows the plan asks for (a serial model, newton on's ends), mapped by atom ID on the
// host as the plain style maps them, once per reneighbouring, where DeviceType's kernels and the
// model read them.
template <class DeviceType> void PairDistspecKokkos<DeviceType>::rebuild_owner_rows_view()
{
  atomKK->sync(Host, TAG_MASK);
  rebuild_owner_rows();
  graph_.owner_rows = rows_for_device(owner_rows_, d_owner_rows_, "DistSpec::PairDistspecKokkos::owner_rows");
}

/* ----------------------------------------------------------------------
   Energy, forces and virial into atomKK's views, as the run plan says of each output's halo
   rows; the semantics of the plain style's write_back
------------------------------------------------------------------------- */

template <class DeviceType> void PairDistspecKokkos<DeviceType>::write_back_views()
{
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const std::size_t n_rows = nall;
  using distspec::models::HaloRows;
  // An output's rows where DeviceType's kernels read them (the model's device rows, else a copy of
  // its host rows), under the plan's one rule for them (run_plan.h rows_to_host): folded by the
  // style's own reverse exchange where it says, then its owned rows, or every row where LAMMPS
  // folds them.
  auto settled = [&](double *on_device, std::vector<double> &on_host, Kokkos::View<double *, DeviceType> &copy,
                     const char *label, int width, HaloRows halo_rows) {
    double *rows = on_device ? on_device : rows_for_device(on_host, copy, label);
    if (distspec::models::folded_by_style(halo_rows)) halo_->reverse(distspec::Rows<double>{rows, n_rows, width});
    return rows;
  };
  // A per-atom view grown to LAMMPS' size for it; then, once written on DeviceType, read on the host.
  auto grow = [&](auto &k_view, auto *&raw, int size, const char *label) {
    if (static_cast<int>(k_view.extent(0)) >= size) return;
    memoryKK->destroy_kokkos(k_view, raw);
    memoryKK->create_kokkos(k_view, raw, size, label);
  };
  auto to_host = [](auto &k_view) {
    k_view.template modify<DeviceType>();
    k_view.template sync<LMPHostType>();
  };

  if (eflag_global) eng_vdwl += model_outputs_.energy;
  if (vflag_global)
    for (int k = 0; k < 6; ++k) virial[k] += model_outputs_.virial[k];

  // Forces: ghost partials into f's ghost rows for LAMMPS' reverse comm (host_folds), or folded
  // by the style first.
  const double *force_data = settled(model_outputs_.device.forces, model_outputs_.forces, d_forces_,
                                     "DistSpec::PairDistspecKokkos::forces", 3, plan_.forces);
  const int force_rows = distspec::models::rows_to_host(plan_.forces, nlocal, nall);
  {
    auto f = atomKK->k_f.template view<DeviceType>();
    const Kokkos::View<const double *[3], Kokkos::LayoutRight, DeviceType, Unmanaged> forces(force_data, n_rows);
    Kokkos::parallel_for(
        "DistSpec::PairDistspecKokkos::forces", Kokkos::RangePolicy<DeviceType>(0, force_rows),
        KOKKOS_LAMBDA(const int i) {
          for (int c = 0; c < 3; ++c) f(i, c) += forces(i, c);
        });
  }

  // Per-atom energy and virial: Pair::ev_setup neither sizes nor zeroes them for a KOKKOS style,
  // so the views grow here and every row up to nall is set (owned rows to the folded values,
  // ghost rows to zero: compute pe/atom and stress/atom fold ghost rows under newton on).
  if (eflag_atom) {
    grow(k_eatom, eatom, maxeatom, "pair:eatom");
    const double *data = settled(model_outputs_.device.energy_rows, model_outputs_.energy_rows, d_energy_rows_,
                                 "DistSpec::PairDistspecKokkos::energy_rows", 1, plan_.energy_rows);
    auto d_eatom = k_eatom.template view<DeviceType>();
    const Kokkos::View<const double *, DeviceType, Unmanaged> energy_rows(data, n_rows);
    Kokkos::parallel_for(
        "DistSpec::PairDistspecKokkos::eatom", Kokkos::RangePolicy<DeviceType>(0, nall),
        KOKKOS_LAMBDA(const int i) { d_eatom(i) = i < nlocal ? energy_rows(i) : 0.0; });
    to_host(k_eatom);
  }
  if (vflag_atom) {
    grow(k_vatom, vatom, maxvatom, "pair:vatom");
    const double *data = settled(model_outputs_.device.virial_rows, model_outputs_.virial_rows, d_virial_rows_,
                                 "DistSpec::PairDistspecKokkos::virial_rows", 6, plan_.virial_rows);
    auto d_vatom = k_vatom.template view<DeviceType>();
    const Kokkos::View<const double *[6], Kokkos::LayoutRight, DeviceType, Unmanaged> virial_rows(data, n_rows);
    Kokkos::parallel_for(
        "DistSpec::PairDistspecKokkos::vatom", Kokkos::RangePolicy<DeviceType>(0, nall),
        KOKKOS_LAMBDA(const int i) {
          for (int k = 0; k < 6; ++k) d_vatom(i, k) = i < nlocal ? virial_rows(i, k) : 0.0;
        });
    to_host(k_vatom);
  }
}

// Rows in host memory (a model's outputs, a serial model's owner rows): DeviceType's kernels read
// them in place where its memory is host memory, and from a device copy otherwise (one upload
// each time). The CUDA and torch models leave their outputs on the device instead
// (OutputRequest::rows_on_device).
template <class DeviceType>
template <class T>
T *PairDistspecKokkos<DeviceType>::rows_for_device(std::vector<T> &rows, Kokkos::View<T *, DeviceType> &copy,
                                                   const char *label)
{
  if (kHostKernels) return rows.data();
  grow_to(copy, rows.size(), label, kGrowthPadding);
  using HostRows = Kokkos::View<const T *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::deep_copy(Kokkos::subview(copy, Kokkos::pair<std::size_t, std::size_t>(0, rows.size())),
                    HostRows(rows.data(), rows.size()));
  return copy.data();
}

/* ----------------------------------------------------------------------
   comm callbacks: the halo exchange of the moment decides which block moves. Feature rows
   carry no coordinates: periodic shifts do not apply.
------------------------------------------------------------------------- */

template <class DeviceType>
int PairDistspecKokkos<DeviceType>::pack_forward_comm_kokkos(DISTSPEC_PACK_FORWARD_COMM_KOKKOS_PARAMS)
{
  (void) pbc_flag;
  (void) pbc;
  return halo_kk_->pack_forward_kokkos(n, DISTSPEC_SWAP_SENDLIST(DeviceType), buf.template view<DeviceType>());
}

template <class DeviceType>
void PairDistspecKokkos<DeviceType>::unpack_forward_comm_kokkos(int n, int first, distspec_compat::KokkosCommBuffer &buf)
{
  halo_kk_->unpack_forward_kokkos(n, first, buf.template view<DeviceType>());
}

template <class DeviceType> double PairDistspecKokkos<DeviceType>::memory_usage()
{
  // Pair's share counts eatom / vatom already.
  double bytes = PairDistspec::memory_usage();
  bytes += sizeof(int) * (d_type_to_species_.size() + d_species_.size() + d_receivers_.size() + d_offsets_.size() +
                          d_senders_.size() + d_owner_rows_.size());
  bytes += sizeof(double) *
      (d_positions_.size() + d_charges_.size() + d_forces_.size() + d_energy_rows_.size() + d_virial_rows_.size());
  return bytes;
}

namespace LAMMPS_NS {
template class PairDistspecKokkos<LMPDeviceType>;
#ifdef LMP_KOKKOS_GPU
template class PairDistspecKokkos<LMPHostType>;
#endif
}    // namespace LAMMPS_NS
