// A SchNet-style message-passing network (Schütt et al., J. Chem. Phys. 148, 241722 (2018))
// on top of a Morse pair baseline, run on the reverse-mode tape of lib/distspec/tensor.
//
//   h0_i          = embedding[species_i]                     every row, halo rows included
//   layer l = 1..L, per edge j -> i (r_ij < cutoff):
//     w_ij        = Dense(rbf(r_ij)) * fc(r_ij)               continuous filter, cosine cutoff fc
//     m_ij        = h_l[j] * w_ij                             element-wise
//     h_{l+1}[i]  = h_l[i] + MLP(sum_j m_ij)                  on receiver rows
//   e_i           = MLP_out(h_L[i]) + E_ref[species_i] + 1/2 sum_j phi(r_ij) s(r_ij)
//   E             = sum of e_i over owned rows
// phi is a Morse potential per species pair, D (exp(-2 alpha (r - r0)) - 2 exp(-alpha (r - r0))),
// and s a cosine switch from 1 at switch_inner to 0 at the cutoff: the physical baseline that
// keeps a small network a smooth perturbation of a stable solid. Forces -dE/dx and the virial
// -sum_e r_e (x) dE/dr_e come from one reverse pass.
//
// Halo strategies (the same code runs both; the host chooses by what it passes):
//   per_layer  receivers = owned rows, a halo of one cutoff(+skin) shell, a Dispatcher with the
//              spec's policy (e.g. mpnn_halo.json: halo / halo_read). h0 is valid on halo rows
//              (species are promoted), so layer 1 reads them as they are; before layers 2..L
//              read neighbours the dispatcher refreshes the halo rows of h_l (forward), and in
//              the backward pass their adjoints send halo gradients home (reverse):
//              (L-1) forward + (L-1) reverse exchanges per step.
//   expanded   receivers = every row, a halo of L x cutoff(+skin), a Dispatcher built with
//              HaloStrategy::expanded (no exchange): every layer runs on halo rows too, owned
//              rows come out exact.
// Either way forces and per-row virial on halo rows are partials the host folds to owners.
//
// Parameters ("parameters" of the model file; dense weights are [in][out] arrays, y = x W + b):
//   "features": F,                         channels of h (the width exchanged per row)
//   "precision": "fp64" | "fp32",          optional (default fp64; runtime.precision overrides)
//   "activation": "shifted_softplus" | "silu",
//   "radial_basis": {"kind": "gaussian", "size": K, "start": a, "stop": b, "width": w}
//                 | {"kind": "bessel", "size": K},               (bessel uses the model cutoff)
//   "embedding": {"Cu": [F numbers], ...},          one row per element
//   "layers": [{"filter": D(K -> F), "update": [D(F -> H), D(H -> F)]}, ...]     1..8 layers
//   "readout": [D(F -> R), D(R -> 1)],
//   "reference_energy": {"Cu": e, ...},            optional, default 0 per element
//   "baseline": {"kind": "morse", "switch_inner": r_s,
//                "pairs": [{"elements": ["Cu", "Cu"], "D": .., "alpha": .., "r0": ..}, ...]}
//                every species pair listed once (no mixing rule is assumed)
// where D(a -> b) = {"weight": [[b numbers] x a], "bias": [b numbers]}.
//
// Registers no op kernels: the network runs on the tape, and its only policy-dependent steps
// are the reads of neighbours' h_l (each layer's fused cfconv op), preceded by the dispatcher's
// before_gather / before_gather_adjoint (tensor::halo_refresh).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/mpnn/ops_radial.h"
#include "distspec/tensor/tensor.h"
#include "models/json_fields.h"
#include "models/model.h"

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::mpnn {

inline constexpr int kMaxLayers = 8;

enum class Activation { shifted_softplus, silu };
enum class Precision { fp64, fp32 };

// y = x weight + bias: weight (in x out), bias (1 x out).
template <class T>
struct Dense {
  tensor::Tensor<T> weight;
  tensor::Tensor<T> bias;
};

template <class T>
struct Interaction {
  Dense<T> filter;               // K -> F
  std::vector<Dense<T>> update;  // F -> H -> F
};

// Everything the network multiplies by, in one precision.
template <class T>
struct Weights {
  tensor::Tensor<T> embedding;  // n_species x F
  std::vector<Interaction<T>> layers;
  std::vector<Dense<T>> readout;  // F -> R -> 1
};

struct Morse {
  double D = 0.0;      // well depth (energy)
  double alpha = 0.0;  // 1 / length
  double r0 = 0.0;     // equilibrium distance
};

struct Params {
  int n_species = 0;
  int features = 0;
  double cutoff = 0.0;
  Precision precision = Precision::fp64;
  Activation activation = Activation::shifted_softplus;
  RadialBasis basis;
  Weights<double> weights;
  std::vector<double> reference_energy;  // per species
  std::vector<Morse> morse;              // n_species x n_species, symmetric
  CosineCutoff baseline_switch;  // inner = switch_inner, outer = cutoff

  const Morse& pair(int a, int b) const { return morse[static_cast<std::size_t>(a) * n_species + b]; }
  int n_layers() const { return static_cast<int>(weights.layers.size()); }
};

// Reads the "parameters" object (errors point under /parameters; the caller adds the file).
Params parse_params(const Json& parameters, const std::vector<std::string>& elements, double cutoff);

// The model for a file on `device`; and for parameters already read (mpnn_cpu.cpp), in their
// precision.
std::unique_ptr<Model> make_model(const ModelFile& file, Device device = Device::cpu);
std::unique_ptr<Model> make_model(ModelInfo info, Params params);
// mpnn_cuda.cu (builds with CUDA only): the same network with forward and reverse pass in CUDA
// kernels, its graph and buffers on the device; the same halo refresh points.
std::unique_ptr<Model> make_cuda_model(ModelInfo info, Params params);

}  // namespace distspec::models::mpnn
