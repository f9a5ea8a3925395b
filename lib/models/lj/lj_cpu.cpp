// Lennard-Jones kernels on the CPU: pair_lj_cut.cpp compute() over a full or half edge list.
#include "models/edge_kernel.h"
#include "models/lj/lj.h"

namespace distspec::models::lj {
namespace {

// Receivers [r_begin, r_end), into `o`.
template <bool kEnergy, bool kVirial>
void pairs(const Params& params, const EdgeArgs& edges, const PairOutputs& o, std::size_t r_begin, std::size_t r_end) {
  ReceiverSums sums;
  edges.for_each_pair(
      [&](int i, int j, const double del[3], double rsq, bool both) {
        const PairCoeff& c = params.coeff(edges.species[i], edges.species[j]);
        if (rsq >= c.cutsq) return;
        const double r2inv = 1.0 / rsq;
        const double r6inv = r2inv * r2inv * r2inv;
        const double fpair = r6inv * (c.lj1 * r6inv - c.lj2) * r2inv;
        const double energy = kEnergy ? r6inv * (c.lj3 * r6inv - c.lj4) - c.offset : 0.0;
        o.tally_pair<kEnergy, kVirial>(sums, j, both, 0.5 * energy, fpair, del);
      },
      [&](int i) { o.flush<kEnergy, kVirial>(i, sums); }, r_begin, r_end);
}

// Each pair once: LJ is symmetric in i and j (coeff(a, b) == coeff(b, a)).
template <bool kVirialOp>
void energy_forces(const EdgeKernelCall<Params>& k) {
  const PairOutputs o = unpack_pair_outputs(k.op, k.outs, k.edges.n_rows, kVirialOp);
  o.with_flags([&](auto energy, auto virial) {
    walk_pairs(k.edges, o, k.call, [&](const PairOutputs& out, std::size_t r_begin, std::size_t r_end) {
      pairs<decltype(energy)::value, decltype(virial)::value>(k.constants, k.edges, out, r_begin, r_end);
    });
  });
}

}  // namespace

void register_ops(OpRegistry& registry) {
  add_edge_kernel(registry, kEnergyForcesOp, 0, energy_forces<false>);
  add_edge_kernel(registry, kEnergyForcesVirialOp, 0, energy_forces<true>);
}

}  // namespace distspec::models::lj
