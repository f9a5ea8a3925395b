/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: what the LAMMPS halo exchanges share.
   Owned rows are atoms [0, nlocal), halo rows are ghosts [nlocal, nlocal+nghost). Forward and
   reverse run through the pair style's comm callbacks, so they follow LAMMPS' own swap pattern
   (several swaps per dimension for thin subdomains, periodic self-images included). Where the
   block in flight lives, and how a swap's rows are packed, is the derived exchange's:
   LammpsHaloExchange (host rows), LammpsDeviceHaloExchange (a CUDA model's rows),
   LammpsHaloExchangeKokkos (rows in Kokkos views, pair_style distspec/kk).
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_BASE_H
#define LMP_DISTSPEC_LAMMPS_HALO_EXCHANGE_BASE_H

#include "comm_brick_swaps.h"

#include "distspec/halo/halo_exchange.h"

#include <cstddef>
#include <cstdint>

namespace LAMMPS_NS {

class LAMMPS;
class Pair;

class LammpsHaloExchangeBase : public distspec::HaloExchange {
 public:
  LammpsHaloExchangeBase(LAMMPS *lmp, Pair *pair) : lmp_(lmp), pair_(pair) {}

  // Row counts of the current step, and the neighbour-list build they come from
  // (NeighborBuilds::generation): what an exchange derives from the ghosts holds while it does.
  void resize(std::size_t n_owned, std::size_t n_halo, std::uint64_t list_generation)
  {
    n_owned_ = n_owned;
    n_halo_ = n_halo;
    list_generation_ = list_generation;
  }
  // The widest row one exchange may carry; the pair style's comm_forward / comm_reverse.
  void set_max_width(int width) { max_width_ = width; }

  std::size_t n_owned() const final { return n_owned_; }
  std::size_t n_halo() const final { return n_halo_; }
  std::uint64_t list_generation() const { return list_generation_; }
  int n_ranks() const final;

  // The block is bound for the length of LAMMPS' comm call, whose callbacks move it.
  void forward(distspec::Rows<double> rows) override;
  // Halo rows are zeroed afterwards: they have been summed into their owners.
  void reverse(distspec::Rows<double> rows) override;

  // The pair style's host comm callbacks delegate here (LAMMPS' classic comm path): host
  // buffers and send lists, whatever memory the block is in.
  virtual int pack_forward(int n, const int *list, double *buf) = 0;
  virtual void unpack_forward(int n, int first, const double *buf) = 0;
  virtual int pack_reverse(int n, int first, double *buf) = 0;
  virtual void unpack_reverse(int n, const int *list, const double *buf) = 0;

 protected:
  // The block the next comm callbacks move; bind() checks its width first (check_width).
  virtual void bind(const distspec::Rows<double> &rows) = 0;
  virtual void unbind() = 0;
  virtual void zero_halo_rows(const distspec::Rows<double> &rows) = 0;
  void check_width(int width) const;
  // In place over this run's ranks; values in host memory.
  void all_reduce_host(double *values, std::size_t n) const;

  // The swaps this rank makes with itself, as LAMMPS' comm has them now: a derived exchange
  // packs nothing for one and copies its rows in place in the unpack (comm_brick_swaps.h).
  CommBrickSwaps self_swaps() const;

  LAMMPS *lmp_;
  Pair *pair_;

 private:
  std::size_t n_owned_ = 0;
  std::size_t n_halo_ = 0;
  std::uint64_t list_generation_ = 0;
  int max_width_ = 0;
};

}    // namespace LAMMPS_NS

#endif
