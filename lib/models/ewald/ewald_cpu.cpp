// Ewald kernels on the CPU: the structure factor of the rows given (stage 1), each row's
// k-space energy, force and virial from the global structure factor (stage 2), and the
// real-space erfc pairs over the full edge list (pair_coul_long.cpp compute()). The k-space
// kernels take cos(k.x) and sin(k.x) from per-axis phase tables (ewald_phases.h). Their op
// state is the model's EdgeOpState: the constants, and the call's threads.
#include <vector>

#include "models/edge_kernel.h"
#include "models/ewald/ewald.h"
#include "models/ewald/ewald_math.h"
#include "models/ewald/ewald_op_args.h"
#include "models/ewald/ewald_phases.h"

namespace distspec::models::ewald {
namespace {

// Atoms per thread below which the k-space loops run on fewer threads: each atom is a sum over
// every k-vector, so a few dozen of them outweigh a thread's start.
constexpr std::size_t kAtomsPerThread = 64;

// Stage 1: G(k) sum_i q_i (cos k.r_i, sin k.r_i) and sum_i q_i over the rows given; under the
// spec those are this rank's owned rows, and the all-reduce that follows sums the ranks.
void structure_factors(Span<const TensorRef> args, Span<const TensorRef> outs, const EdgeOpState<Params>& state) {
  // It needs no constants: a caller may give a state without them.
  const int asked = state.call.threads;
  const KSpaceArgs a = unpack_kspace_args(kStructureFactorsOp.qualname, args, 5, Device::cpu);
  const StructureFactorOutputs o = unpack_structure_factor_outputs(outs, a.n_k, Device::cpu);
  const double alpha = a.alpha[0], volume = cell_volume(a.cell);
  // Each thread sums its range of atoms, in atom order, for every k-vector, by per-axis phases
  // where they apply; the threads' sums are added in thread order.
  const int threads = loop_threads(asked, a.n, kAtomsPerThread);
  std::vector<double> re(a.n_k * static_cast<std::size_t>(threads), 0.0), im(re.size(), 0.0);
  parallel_for(
      threads, a.n,
      [&](std::size_t begin, std::size_t end, int t) {
        double* re_t = &re[a.n_k * static_cast<std::size_t>(t)];
        double* im_t = &im[a.n_k * static_cast<std::size_t>(t)];
        PhaseTable phases;
        const bool tabled = phases.build(a.cell, a.k, a.n_k);
        for (std::size_t i = begin; i < end; ++i) {
          const double* x = a.x + 3 * i;
          const double q = a.q[i];
          if (tabled) phases.set_atom(x);
          for (std::size_t m = 0; m < a.n_k; ++m) {
            const double* k = a.k + 3 * m;
            double c, s;
            if (tabled) {
              phases.phase(m, c, s);
            } else {
              const double kr = k[0] * x[0] + k[1] * x[1] + k[2] * x[2];
              c = std::cos(kr);
              s = std::sin(kr);
            }
            re_t[m] += q * c;
            im_t[m] += q * s;
          }
        }
      },
      kAtomsPerThread);
  for (std::size_t m = 0; m < a.n_k; ++m) {
    const double* k = a.k + 3 * m;
    const double g = green(k[0] * k[0] + k[1] * k[1] + k[2] * k[2], alpha, volume);
    double real = 0.0, imag = 0.0;
    for (int t = 0; t < threads; ++t) {
      real += re[a.n_k * static_cast<std::size_t>(t) + m];
      imag += im[a.n_k * static_cast<std::size_t>(t) + m];
    }
    o.real[m] = g * real;
    o.imag[m] = g * imag;
  }
  double total = 0.0;
  for (std::size_t i = 0; i < a.n; ++i) total += a.q[i];
  o.total_charge[0] = total;
}

// Stage 2: per row, its k-space, self and background energy, its k-space force and its share
// of the k-space virial, from the global structure factor. Rows are independent; the global
// virial is summed per thread, then in thread order.
void reciprocal(Span<const TensorRef> args, Span<const TensorRef> outs, const EdgeOpState<Params>& s) {
  const Params& params = *s.constants;
  const ReciprocalArgs r = unpack_reciprocal(args, outs, Device::cpu);
  const KSpaceArgs& a = r.in;
  const double alpha = a.alpha[0], volume = cell_volume(a.cell), c = params.coulomb_constant;
  const bool virial = r.virial || r.virial_rows;
  const int threads = loop_threads(s.call.threads, a.n, kAtomsPerThread);
  std::vector<double> virials(6 * static_cast<std::size_t>(threads), 0.0);
  parallel_for(
      threads, a.n,
      [&](std::size_t begin, std::size_t end, int t) {
        double* virial_t = &virials[6 * static_cast<std::size_t>(t)];
        PhaseTable phases;
        const bool tabled = phases.build(a.cell, a.k, a.n_k);
        for (std::size_t i = begin; i < end; ++i) {
          const double q = a.q[i];
          if (q == 0.0) continue;  // atoms of other species (NULL types), or uncharged ones
          ReciprocalRow row;
          if (tabled) {
            phases.set_atom(a.x + 3 * i);
            for (std::size_t m = 0; m < a.n_k; ++m) {
              double cm, sm;
              phases.phase(m, cm, sm);
              row.add_phase(cm, sm, a.k + 3 * m, r.real[m], r.imag[m], alpha, virial);
            }
          } else {
            for (std::size_t m = 0; m < a.n_k; ++m)
              row.add(a.x + 3 * i, a.k + 3 * m, r.real[m], r.imag[m], alpha, virial);
          }
          r.energy[i] += reciprocal_energy(c, q, row.phase, alpha, r.total_charge[0], volume);
          for (int d = 0; d < 3; ++d) r.forces[3 * i + d] += c * q * row.field[d];
          if (!virial) continue;
          for (int v = 0; v < 6; ++v) {
            const double w = 0.5 * c * q * row.virial[v];
            virial_t[v] += w;
            if (r.virial_rows) r.virial_rows[6 * i + v] += w;
          }
        }
      },
      kAtomsPerThread);
  if (r.virial)
    for (int t = 0; t < threads; ++t)
      for (int v = 0; v < 6; ++v) r.virial[v] += virials[6 * static_cast<std::size_t>(t) + v];
}

// Real space: C q_i q_j erfc(alpha r) / r for every edge within the cutoff, on the receiver,
// each thread over its range of receivers (distspec/util/threads.h).
void real_space(const EdgeKernelCall<Params>& k) {
  const Params& params = k.constants;
  const EdgeArgs& edges = k.edges;
  const double* q = k.per_row(0, "charges");
  const PairOutputs o = unpack_pair_outputs(kRealSpaceOp.qualname, k.outs, edges.n_rows, true);
  const bool polynomial = params.erfc == Erfc::lammps_polynomial;
  walk_pairs(edges, o, k.call, [&](const PairOutputs& out, std::size_t r_begin, std::size_t r_end) {
    edges.for_each_edge(
        [&](int i, int j, const double del[3], double rsq) {
          if (rsq >= params.cutsq) return;
          const double qiqj = params.coulomb_constant * q[i] * q[j];
          if (qiqj == 0.0) return;
          double energy, fpair;
          real_space_pair(rsq, qiqj, params.alpha, polynomial, energy, fpair);
          out.tally(i, 0.5 * energy, fpair, del);
        },
        r_begin, r_end);
  });
}

}  // namespace

void register_ops(OpRegistry& registry) {
  registry.add<Device::cpu>(kStructureFactorsOp, structure_factors);
  registry.add<Device::cpu>(kReciprocalOp, reciprocal);
  add_edge_kernel(registry, kRealSpaceOp, 1, real_space);
}

}  // namespace distspec::models::ewald
