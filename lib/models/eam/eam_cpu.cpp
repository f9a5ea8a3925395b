// EAM kernels on the CPU: the three stages of pair_eam.cpp compute() over a full or half edge list.
#include <algorithm>
#include <cmath>

#include "distspec/error.h"
#include "models/edge_kernel.h"
#include "models/eam/eam.h"
#include "models/model_error.h"

namespace distspec::models::eam {
namespace {

// rho_i += rho_b(r_ij) for every pair j -> i within the cutoff.
//   Over for_each_pair (each pair once, giving rho_j its rho_a(r_ij) too where it says `both`).
//   Over a half_newton_off list with newton-on ends and owner rows (the host's common case): a
//     pair with a periodic image of an atom of this rank is there twice, once from each atom,
//     and is taken once, from newton on's side, with rho_a going to the image's owner row; only
//     pairs with atoms of other ranks are taken from the owned side alone. On one rank that is
//     newton on's pair count, and still no reverse exchange.
template <class Pair>
void density_pairs(const EdgeArgs& edges, const int* owners, double* rho_rows, std::size_t r_begin, std::size_t r_end,
                   Pair&& pair) {
  r_end = std::min(r_end, edges.n_receivers);
  for (std::size_t r = r_begin; r < r_end; ++r) {
    const int i = edges.receivers[r];
    if (edges.species[i] < 0) continue;
    const double xi[3] = {edges.x[3 * static_cast<std::size_t>(i)], edges.x[3 * static_cast<std::size_t>(i) + 1],
                          edges.x[3 * static_cast<std::size_t>(i) + 2]};
    double rho_i = 0.0;
    auto visit = [&](int j, bool to_owner) {
      const double* xj = edges.x + 3 * static_cast<std::size_t>(j);
      const double del[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
      pair(i, j, del[0] * del[0] + del[1] * del[1] + del[2] * del[2], to_owner, rho_i);
    };
    const int end = edges.ends[r];
    for (int e = edges.offsets[r]; e < end; ++e) {
      const int j = edges.senders[e];
      if (edges.species[j] >= 0) visit(j, true);
    }
    for (int e = end; e < edges.offsets[r + 1]; ++e) {
      const int j = edges.senders[e];
      // The image of an atom of this rank: its owner takes the pair from newton on's side.
      if (owners[j] < 0 && edges.species[j] >= 0) visit(j, false);
    }
    rho_rows[i] += rho_i;
  }
}

void density(const EdgeKernelCall<Tables>& k) {
  const Tables& t = k.constants;
  const EdgeCall& call = k.call;
  expect_count(kDensityOp.qualname, "outputs", k.outs.size(), 1);
  EdgeArgs edges = k.edges;
  double* rho = expect_f64(kDensityOp.qualname, "rho", 0, k.outs[0], edges.n_rows, 1);
  const double cutsq = t.cutoff * t.cutoff;
  // rho_b(r) for the receiver (species a) from the sender, and rho_a(r) for the sender (species b).
  auto both_densities = [&](int a, int b, double rsq, double& rho_b, double& rho_a) {
    const Knot k = t.r_knot_within_cutoff(std::sqrt(rsq));
    rho_b = spline_value(t.density_table(b, a), k);
    rho_a = a == b ? rho_b : spline_value(t.density_table(a, b), k);
  };
  const bool fold_images = call.list == EdgeList::half_newton_off && call.newton_on_ends && call.owner_rows;
  if (fold_images) {
    edges.use_newton_on_ends(kDensityOp.qualname, call.newton_on_ends, call.check_indices);
    edges.check_owner_rows(kDensityOp.qualname, call.owner_rows, call.check_indices);
    const int* owners = call.owner_rows;
    walk_row_pairs(edges, rho, 1, call, [&](double* rho_rows, std::size_t r_begin, std::size_t r_end) {
      density_pairs(edges, owners, rho_rows, r_begin, r_end, [&](int i, int j, double rsq, bool to_owner, double& rho_i) {
        if (!(rsq < cutsq)) return;
        double rho_b, rho_a;
        both_densities(edges.species[i], edges.species[j], rsq, rho_b, rho_a);
        rho_i += rho_b;
        if (!to_owner) return;
        // Without a branch on the owner: a sender owned elsewhere puts +0 on its own halo row.
        const int o = owners[j];
        rho_rows[o >= 0 ? o : j] += o >= 0 ? rho_a : 0.0;
      });
    });
    return;
  }
  walk_row_pairs(edges, rho, 1, call, [&](double* rho_rows, std::size_t r_begin, std::size_t r_end) {
    double rho_i = 0.0;
    edges.for_each_pair(
        [&](int i, int j, const double*, double rsq, bool both) {
          if (!(rsq < cutsq)) return;
          double rho_b, rho_a;
          both_densities(edges.species[i], edges.species[j], rsq, rho_b, rho_a);
          rho_i += rho_b;
          // Without a branch: `both` follows the sender's row, which a binned list mixes. A
          // halo row (not `both`) gets +0 and stays zero.
          rho_rows[j] += both ? rho_a : 0.0;
        },
        [&](int i) {
          rho_rows[i] += rho_i;
          rho_i = 0.0;
        },
        r_begin, r_end);
  });
}

// fp_i = F'_a(rho_i); energy_i += F_a(rho_i). Atoms of no species (< 0) embed nothing.
void embedding(Span<const TensorRef> args, Span<const TensorRef> outs, const Tables& t) {
  expect_count(kEmbeddingOp.qualname, "arguments", args.size(), 2);
  expect_count(kEmbeddingOp.qualname, "outputs", outs.size(), 2);
  const std::size_t n = args[0].rows;
  const double* rho = expect_f64(kEmbeddingOp.qualname, "rho", 0, args[0], n, 1);
  const int* species = expect_i32(kEmbeddingOp.qualname, "species", 1, args[1], n);
  double* fp = expect_f64(kEmbeddingOp.qualname, "fp", 0, outs[0], n, 1);
  double* energy = expect_f64(kEmbeddingOp.qualname, "energy rows", 1, outs[1], n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    fp[i] = 0.0;
    if (species[i] < 0) continue;
    if (species[i] >= t.n_species)
      throw Error(model_error_id::op_args, "", std::string("op '") + kEmbeddingOp.qualname + "': species " +
                      std::to_string(species[i]) + " of row " + std::to_string(i) + " is not one of the model's " +
                      std::to_string(t.n_species) + " elements");
    energy[i] += t.embedding(species[i], rho[i], &fp[i]);
  }
}

// Pair forces (eam_math.h pair_force).
template <bool kEnergy, bool kVirial>
void pair_forces(const Tables& t, const EdgeArgs& edges, const double* fp, const PairOutputs& o, std::size_t r_begin,
                 std::size_t r_end) {
  const double cutsq = t.cutoff * t.cutoff;
  // psi'(r) is symmetric in i and j: each pair once, its force on both.
  ReceiverSums sums;
  edges.for_each_pair([&](int i, int j, const double del[3], double rsq, bool both) {
    if (!(rsq < cutsq)) return;
    const int a = edges.species[i], b = edges.species[j];
    const double r = std::sqrt(rsq);
    const Knot k = t.r_knot_within_cutoff(r);
    // rhoip: derivative of the density i gives j; rhojp: of the density j gives i. One table
    // for a pair of one element (pair_eam.cpp evaluates it twice).
    const double rhoip = spline_slope(t.density_table(a, b), k);
    const double rhojp = a == b ? rhoip : spline_slope(t.density_table(b, a), k);
    double phi, fpair;
    pair_force(t.z2r[Tables::pair_index(a, b)][static_cast<std::size_t>(k.m)].data(), k.p, r, fp[i], fp[j], rhoip,
               rhojp, phi, fpair);
    o.tally_pair<kEnergy, kVirial>(sums, j, both, 0.5 * phi, fpair, del);
  }, [&](int i) { o.flush<kEnergy, kVirial>(i, sums); }, r_begin, r_end);
}

void forces(const EdgeKernelCall<Tables>& k) {
  const Tables& t = k.constants;
  EdgeArgs edges = k.edges;
  // Newton on: the pairs with halo atoms that this rank computes, their shares left on halo rows.
  if (k.call.newton_on_ends) edges.use_newton_on_ends(kForcesOp.qualname, k.call.newton_on_ends, k.call.check_indices);
  const double* fp = k.per_row(0, "fp");
  const PairOutputs o = unpack_pair_outputs(kForcesOp.qualname, k.outs, edges.n_rows, k.outs.size() > 2);
  o.with_flags([&](auto energy, auto virial) {
    walk_pairs(edges, o, k.call, [&](const PairOutputs& out, std::size_t r_begin, std::size_t r_end) {
      pair_forces<decltype(energy)::value, decltype(virial)::value>(t, edges, fp, out, r_begin, r_end);
    });
  });
}

}  // namespace

void register_ops(OpRegistry& registry) {
  add_edge_kernel(registry, kDensityOp, 0, density);
  registry.add<Device::cpu>(kEmbeddingOp, embedding);
  add_edge_kernel(registry, kForcesOp, 1, forces);
}

}  // namespace distspec::models::eam
