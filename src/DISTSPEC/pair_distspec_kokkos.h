/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: pair_style distspec/kk

   The KOKKOS variant of pair_style distspec for runs with `-k on -sf kk`. Its data stay in
   Kokkos views on DeviceType: Kokkos kernels promote the spec's shard_fields from atomKK's
   views into the model's [owned | halo] input rows, build the edge arrays from KOKKOS' full
   neighbour list, pack and unpack feature rows in the halo exchanges, and accumulate energy,
   forces and virial into atomKK's views. The model itself, the spec's dispatcher and the
   output plan are those of the plain style.
------------------------------------------------------------------------- */

#ifdef PAIR_CLASS
// clang-format off
PairStyle(distspec/kk,PairDistspecKokkos<LMPDeviceType>);
PairStyle(distspec/kk/device,PairDistspecKokkos<LMPDeviceType>);
PairStyle(distspec/kk/host,PairDistspecKokkos<LMPHostType>);
// clang-format on
#else

#ifndef LMP_PAIR_DISTSPEC_KOKKOS_H
#define LMP_PAIR_DISTSPEC_KOKKOS_H

#include "kokkos_base.h"
#include "lammps_compat.h"
#include "kokkos_type.h"
#include "lammps_halo_exchange_kokkos.h"
#include "pair_distspec.h"

namespace LAMMPS_NS {

template <class DeviceType> class PairDistspecKokkos : public PairDistspec, public KokkosBase {
 public:
  // The model's kernels get raw pointers of DeviceType views: DISTSPEC's host kernels where
  // DeviceType's memory is host memory, its CUDA kernels otherwise (a CUDA execution space).
  static constexpr bool kHostKernels = LammpsHaloExchangeKokkos<DeviceType>::kHostReadable;

  PairDistspecKokkos(class LAMMPS *);
  ~PairDistspecKokkos() override;

  void init_style() override;
  void compute(int, int) override;

  int pack_forward_comm_kokkos(DISTSPEC_PACK_FORWARD_COMM_KOKKOS_PARAMS) override;
  void unpack_forward_comm_kokkos(int, int, distspec_compat::KokkosCommBuffer &) override;
  double memory_usage() override;

  // The stages of compute() that launch kernels; public because CUDA compiles no lambda in a
  // non-public member function.
  void promote_shard_fields();
  void rebuild_edge_arrays();
  void rebuild_owner_rows_view();
  void write_back_views();
  // Over the model's forces in DeviceType memory (a CUDA model's, or any model's on a host
  // space), on DeviceType's threads.
  bool forces_finite(const double *forces) const;
  void zero_non_finite_forces(double *forces);

 protected:
  void check_device() const override;
  std::unique_ptr<LammpsHaloExchangeBase> make_halo_exchange() override;
  distspec::Device model_device() const override;
  // KOKKOS' list lives in the execution space's views: the finite check searches all pairs.
  NeighList *host_neighbor_list() const override { return nullptr; }
  // The host execution space's threads (`-k on t N`) run the model's CPU kernels too.
  int model_threads() const override
  {
    return kHostKernels ? static_cast<int>(typename DeviceType::execution_space().concurrency()) : 1;
  }

 private:
  // Pair::eatom / vatom are double in every LAMMPS version: own fp64 DualViews keep clear of
  // the KOKKOS precision types that 10 Sep 2025 renamed.
  using tdual_eatom = Kokkos::DualView<double *, Kokkos::LayoutRight, DeviceType>;
  using tdual_vatom = Kokkos::DualView<double *[6], Kokkos::LayoutRight, DeviceType>;

  void grow_atom_views();
  // Host vectors (the model's per-row outputs, owner rows) where DeviceType's kernels can read them.
  template <class T> T *rows_for_device(std::vector<T> &rows, Kokkos::View<T *, DeviceType> &copy, const char *label);

  // halo_, as made by make_halo_exchange: the Kokkos comm callbacks reach its views.
  LammpsHaloExchangeKokkos<DeviceType> *halo_kk_ = nullptr;

  // Which inputs the run plan fills on every row (RunPlan::inputs: the spec's shard_fields).
  bool promote_positions_ = false, promote_species_ = false, promote_charges_ = false;

  // Model input rows [owned | halo], sized to atom->nmax; grow only.
  typename ArrayTypes<DeviceType>::t_int_1d d_type_to_species_;    // per LAMMPS type (1-based), -1 = NULL
  Kokkos::View<double *[3], Kokkos::LayoutRight, DeviceType> d_positions_;
  Kokkos::View<int *, DeviceType> d_species_;
  Kokkos::View<double *, DeviceType> d_charges_;
  // CSR edges by receiver; grow only (senders with a padding factor).
  Kokkos::View<int *, DeviceType> d_receivers_, d_offsets_, d_senders_;
  // A serial model's owner of each row (AtomGraph::owner_rows).
  Kokkos::View<int *, DeviceType> d_owner_rows_;
  // Device copies of the model's output rows, where DeviceType's memory is not host memory.
  Kokkos::View<double *, DeviceType> d_forces_, d_energy_rows_, d_virial_rows_;

  tdual_eatom k_eatom;
  tdual_vatom k_vatom;
};

}    // namespace LAMMPS_NS

#endif
#endif
