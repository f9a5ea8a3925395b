// The message-passing network on the CPU: one forward pass on the tape, one reverse pass for
// forces and virial. fp64 and fp32 share this code; coordinates, forces, energy and virial are
// fp64 in both (see lib/models/mpnn/ops_geometry.h and ops_rows.h).
//
// Memory: each layer's messages go through one fused op (cfconv), so no edges x F block exists;
// the largest per-edge blocks are the radial basis and its gradient (edges x K). Every tensor of
// a step comes from the network's workspace, which keeps the buffers between steps, so that a
// steady-state MD step allocates no large block (and touches no new page).
#include <algorithm>
#include <cmath>
#include <string>

#include "distspec/tensor/ops_activation.h"
#include "models/mpnn/ops_cfconv.h"
#include "distspec/tensor/ops_dense.h"
#include "distspec/tensor/ops_elementwise.h"
#include "models/mpnn/ops_geometry.h"
#include "distspec/tensor/ops_halo.h"
#include "distspec/tensor/ops_rows.h"
#include "distspec/util/threads.h"
#include "models/model_error.h"
#include "models/mpnn/mpnn.h"

namespace distspec::models::mpnn {
namespace {

using namespace distspec::tensor;

template <class T>
Dense<T> cast(const Dense<double>& d) {
  return {tensor_cast<T>(d.weight), tensor_cast<T>(d.bias)};
}

template <class T>
std::vector<Dense<T>> cast(const std::vector<Dense<double>>& mlp) {
  std::vector<Dense<T>> out;
  for (const Dense<double>& d : mlp) out.push_back(cast<T>(d));
  return out;
}

template <class T>
Weights<T> cast(const Weights<double>& w) {
  Weights<T> out;
  out.embedding = tensor_cast<T>(w.embedding);
  for (const Interaction<double>& layer : w.layers)
    out.layers.push_back({cast<T>(layer.filter), cast<T>(layer.update)});
  out.readout = cast<T>(w.readout);
  return out;
}

// The Morse baseline of each edge, halved because the full edge list holds every pair twice:
//   out[e] = 1/2 D (exp(-2 alpha (r - r0)) - 2 exp(-alpha (r - r0)))   for the edge's species pair.
// The pair table and the per-edge pair index are borrowed, like every constant of a tape op.
template <class T>
Var<T> half_morse(Tape& tape, const Var<T>& r, const std::vector<Morse>& table, Span<const int> pair) {
  const std::size_t n = r.rows();
  Tensor<T> out = tape.tensor<T>(n, 1);
  parallel_for(tape.threads(), n, [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t e = begin; e < end; ++e) {
      const Morse& m = table[pair[e]];
      const double x = std::exp(-m.alpha * (r.value()(e, 0) - m.r0));
      out(e, 0) = static_cast<T>(0.5 * m.D * (x * x - 2.0 * x));
    }
  });
  Var<T> y = Var<T>::result(std::move(out), r.requires_grad());
  if (y.requires_grad())
    tape.record([r, y, &table, pair, n, threads = tape.threads()] {
      parallel_for(threads, n, [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t e = begin; e < end; ++e) {
          const Morse& m = table[pair[e]];
          const double x = std::exp(-m.alpha * (r.value()(e, 0) - m.r0));
          r.grad()(e, 0) += static_cast<T>(y.grad()(e, 0) * m.D * m.alpha * (x - x * x));
        }
      });
    });
  return y;
}

// The edges the model acts on, in CSR by receiver: the host's edges whose two rows are this
// model's species and lie within the cutoff. Edges beyond the cutoff contribute nothing, with
// zero slope (every edge term carries a C1 cosine cutoff), so dropping them is exact.
struct Edges {
  std::vector<int> receivers;  // rows that receive messages
  std::vector<int> offsets;    // receivers.size() + 1
  std::vector<int> receiver;   // per edge: its receiver's row
  std::vector<int> sender;     // per edge
  std::vector<int> pair;       // per edge: species pair index a * n_species + b
  std::vector<int> readout;    // owned rows of this model's species: the rows whose energy counts

  void build(const AtomGraph& g, int n_species, double cutoff);
};

void Edges::build(const AtomGraph& g, int n_species, double cutoff) {
  // A species past the model's elements would index past its tables: a host bug, said so.
  for (std::size_t i = 0; i < g.n_rows(); ++i)
    if (g.species[i] >= n_species)
      throw Error(model_error_id::op_args, "",
                  "mpnn: species " + std::to_string(g.species[i]) + " of row " + std::to_string(i) +
                      " is not one of the model's " + std::to_string(n_species) + " elements");
  for (auto* v : {&receivers, &offsets, &receiver, &sender, &pair, &readout}) v->clear();
  offsets.push_back(0);
  const double cutsq = cutoff * cutoff;
  for (std::size_t r = 0; r < g.n_receivers; ++r) {
    const int i = g.receivers[r];
    if (g.species[i] < 0) continue;
    const double* xi = g.positions + 3 * static_cast<std::size_t>(i);
    for (int k = g.offsets[r]; k < g.offsets[r + 1]; ++k) {
      const int j = g.senders[k];
      if (g.species[j] < 0) continue;
      const double* xj = g.positions + 3 * static_cast<std::size_t>(j);
      const double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
      if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= cutsq) continue;
      receiver.push_back(i);
      sender.push_back(j);
      pair.push_back(g.species[i] * n_species + g.species[j]);
    }
    receivers.push_back(i);
    offsets.push_back(static_cast<int>(sender.size()));
  }
  for (std::size_t i = 0; i < g.n_owned; ++i)
    if (g.species[i] >= 0) readout.push_back(static_cast<int>(i));
}

template <class T>
class Network final : public Model {
 public:
  Network(ModelInfo info, Params params)
      : info_(std::move(info)), params_(std::move(params)), weights_(cast<T>(params_.weights)) {}

  const ModelInfo& info() const override { return info_; }
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request, ModelOutputs& out) override;

 private:
  Var<T> activation(Tape& tape, const Var<T>& x) const {
    return params_.activation == Activation::silu ? silu(tape, x) : shifted_softplus(tape, x);
  }
  Var<T> mlp(Tape& tape, const Var<T>& x, const std::vector<Dense<T>>& layers) const {
    const Var<T> hidden = activation(tape, linear(tape, x, layers[0].weight, layers[0].bias));
    return linear(tape, hidden, layers[1].weight, layers[1].bias);
  }
  // h0: the embedding of every row's species. Species are promoted to halo rows, so this block
  // is valid on halo rows without an exchange (RowKind::replicated).
  Tensor<T> embed(const Tape& tape, const AtomGraph& graph) const;
  void write_outputs(const AtomGraph& graph, const Var<double>& x, const Var<T>& edge_vec, const Var<T>& row_energy,
                     double energy, const OutputRequest& request, ModelOutputs& out, int threads) const;

  ModelInfo info_;
  Params params_;
  Weights<T> weights_;   // params_.weights in the network's precision: what the layers multiply by
  Edges edges_;          // per step; kept so its buffers reallocate only when they grow
  Workspace workspace_;  // the storage of every step's tensors, kept for the next step
};

template <class T>
Tensor<T> Network<T>::embed(const Tape& tape, const AtomGraph& graph) const {
  const std::size_t f = static_cast<std::size_t>(params_.features);
  Tensor<T> h = tape.tensor<T>(graph.n_rows(), f);
  for (std::size_t i = 0; i < graph.n_rows(); ++i)
    if (graph.species[i] >= 0) std::copy_n(weights_.embedding.row(graph.species[i]), f, h.row(i));
  return h;
}

template <class T>
void Network<T>::compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
                         ModelOutputs& out) {
  const std::size_t n = graph.n_rows();
  out.reset(n, request);
  edges_.build(graph, params_.n_species, params_.cutoff);
  const Edges& e = edges_;
  // Every op of the step runs on the threads the host gives (distspec/util/threads.h).
  Tape tape(workspace_, usable_threads(request.threads));

  // Edge geometry: r_e = x_receiver - x_sender; halo coordinates are kept current by the host.
  // Energy-only requests keep the coordinates constant: the tape then records nothing.
  Tensor<double> positions = tape.tensor<double>(n, 3);
  std::copy_n(graph.positions, 3 * n, positions.data());
  const bool gradients = request.forces || request.virial || request.virial_rows;
  const Var<double> x = Var<double>::result(std::move(positions), gradients);
  const Var<T> edge_vec = edge_vectors<T>(tape, x, e.receiver, e.sender);
  const Var<T> r = lengths(tape, edge_vec);
  const Var<T> fc = cosine_cutoff(tape, r, CosineCutoff{0.0, params_.cutoff});
  const Var<T> rbf = radial_basis(tape, r, params_.basis);

  Var<T> h = Var<T>::constant(embed(tape, graph));
  for (int l = 0; l < params_.n_layers(); ++l) {
    const Interaction<T>& layer = weights_.layers[l];
    // cfconv reads h_l of each sender; from layer 2 on the policy refreshes the halo rows first
    // (forward exchange), and the adjoint returns their gradients to the owners (reverse exchange).
    halo_refresh(tape, dispatch, h, l == 0 ? RowKind::replicated : RowKind::features);
    // Sum of messages h_l[j] * Dense(rbf) * fc per receiver. Every edge of a receiver is on this
    // rank (owned receivers per layer, or every row in the expanded strategy), so the sum is
    // complete where it is taken: no after_scatter (halo correction) exchange is needed, and
    // none is made.
    const Var<T> aggregate = cfconv(tape, h, rbf, fc, layer.filter.weight, layer.filter.bias, e.offsets, e.sender);
    // Residual update on the receiver rows; halo rows keep stale values until the next refresh.
    h = scatter_add(tape, h, mlp(tape, aggregate, layer.update), e.receivers);
  }

  // Per-row energy of owned rows: network readout plus half the baseline of each edge.
  const Var<T> readout = mlp(tape, gather_rows(tape, h, e.readout), weights_.readout);
  const Var<T> pair_energy =
      mul(tape, half_morse(tape, r, params_.morse, e.pair), cosine_cutoff(tape, r, params_.baseline_switch));
  const Var<T> pair_rows = scatter_add(tape, Var<T>::constant(tape.tensor<T>(n, 1)), pair_energy, e.receiver);
  const Var<T> row_energy = add(tape, readout, gather_rows(tape, pair_rows, e.readout));
  const Var<double> energy = sum_rows(tape, row_energy);
  if (gradients) {
    energy.grad()(0, 0) = 1.0;
    tape.backward();
  }

  double reference = 0.0;
  for (int i : e.readout) reference += params_.reference_energy[graph.species[i]];
  write_outputs(graph, x, edge_vec, row_energy, energy.value()(0, 0) + reference, request, out, tape.threads());
}

template <class T>
void Network<T>::write_outputs(const AtomGraph& graph, const Var<double>& x, const Var<T>& edge_vec,
                               const Var<T>& row_energy, double energy, const OutputRequest& request,
                               ModelOutputs& out, int threads) const {
  out.energy = energy;
  if (request.energy_rows)
    for (std::size_t k = 0; k < edges_.readout.size(); ++k) {
      const int i = edges_.readout[k];
      out.energy_rows[i] = row_energy.value()(k, 0) + params_.reference_energy[graph.species[i]];
    }
  if (!x.requires_grad()) return;  // energies only
  const Tensor<double>& dx = x.grad();
  for (std::size_t k = 0; k < out.forces.size(); ++k) out.forces[k] = -dx.data()[k];
  if (!request.virial && !request.virial_rows) return;
  // W = -sum_e r_e (x) dE/dr_e (= sum_i x_i (x) f_i over every row), accumulated in fp64; each
  // edge's share goes half to each of its two rows.
  constexpr int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  const Tensor<T>& v = edge_vec.value();
  const Tensor<T>& g = edge_vec.grad();
  auto edge_virial = [&](std::size_t k, double* w) {
    for (int c = 0; c < 6; ++c) w[c] = -double(v(k, ab[c][0])) * double(g(k, ab[c][1]));
  };
  if (request.virial) {
    // Per-thread partial sums, added in thread order.
    std::vector<double> partial(6 * static_cast<std::size_t>(std::max(threads, 1)), 0.0);
    parallel_for(threads, v.rows(), [&](std::size_t begin, std::size_t end, int t) {
      double* sum = &partial[6 * static_cast<std::size_t>(t)];
      double w[6];
      for (std::size_t k = begin; k < end; ++k) {
        edge_virial(k, w);
        for (int c = 0; c < 6; ++c) sum[c] += w[c];
      }
    });
    for (std::size_t k = 0; k < partial.size(); ++k) out.virial[k % 6] += partial[k];
  }
  if (request.virial_rows)
    for (std::size_t k = 0; k < v.rows(); ++k) {
      double w[6];
      edge_virial(k, w);
      for (const int row : {edges_.receiver[k], edges_.sender[k]})
        for (int c = 0; c < 6; ++c) out.virial_rows[6 * static_cast<std::size_t>(row) + c] += 0.5 * w[c];
    }
}

}  // namespace

std::unique_ptr<Model> make_model(ModelInfo info, Params params) {
  info.message_passing_layers = params.n_layers();
  info.halo_feature_reads = params.n_layers() - 1;  // h_l of neighbours, layers 2..L
  info.comm_width = params.features;                // h_l, one row per atom, is the only block exchanged
  if (params.precision == Precision::fp32) return std::make_unique<Network<float>>(std::move(info), std::move(params));
  return std::make_unique<Network<double>>(std::move(info), std::move(params));
}

}  // namespace distspec::models::mpnn
