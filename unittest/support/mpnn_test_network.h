// A generated message-passing network for the model tests (CPU and CUDA): random weights large
// enough that the network, not its Morse baseline, shapes the energy surface, so that derivative
// checks and CPU-CUDA comparisons exercise the network's own code. Deterministic (seed 1234).
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "models/json_fields.h"
#include "models/model_file.h"

namespace distspec::test {

struct MpnnTestNetwork {
  int layers = 3;
  int species = 2;  // Cu, then Ni
  std::string activation = "silu";
  std::string basis = "gaussian";  // or bessel
  std::string precision = "fp64";
  int features = 8;
  double cutoff = 4.0;
};

// A dense layer of `in` x `out` weights drawn with standard deviation scale / sqrt(in).
inline models::Json random_dense(std::mt19937& rng, int in, int out, double scale) {
  using models::Json;
  std::normal_distribution<double> normal(0.0, scale / std::sqrt(double(in)));
  Json weight = Json::array(), bias = Json::array();
  for (int k = 0; k < in; ++k) {
    Json row = Json::array();
    for (int c = 0; c < out; ++c) row.push_back(normal(rng));
    weight.push_back(row);
  }
  for (int c = 0; c < out; ++c) bias.push_back(0.1 * normal(rng));
  return {{"weight", weight}, {"bias", bias}};
}

inline models::ModelFile random_mpnn_model(const MpnnTestNetwork& net) {
  using models::Json;
  const std::vector<std::string> names{"Cu", "Ni"};
  std::mt19937 rng(1234);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int k = 6, f = net.features;
  Json p;
  p["features"] = f;
  p["precision"] = net.precision;
  p["activation"] = net.activation;
  p["radial_basis"] =
      net.basis == "bessel"
          ? Json{{"kind", "bessel"}, {"size", k}}
          : Json{{"kind", "gaussian"}, {"size", k}, {"start", 0.5}, {"stop", net.cutoff}, {"width", 0.5}};
  models::ModelFile file;
  file.path = "test_network.json";
  file.architecture = "mpnn";
  file.units = "metal";
  file.cutoff = net.cutoff;
  for (int s = 0; s < net.species; ++s) {
    file.elements.push_back(names[s]);
    Json row = Json::array();
    for (int c = 0; c < f; ++c) row.push_back(normal(rng));
    p["embedding"][names[s]] = row;
    p["reference_energy"][names[s]] = -0.5 - s;
  }
  for (int l = 0; l < net.layers; ++l)
    p["layers"].push_back(
        {{"filter", random_dense(rng, k, f, 1.0)}, {"update", {random_dense(rng, f, 6, 1.0), random_dense(rng, 6, f, 1.0)}}});
  p["readout"] = {random_dense(rng, f, 4, 1.0), random_dense(rng, 4, 1, 1.0)};
  Json pairs = Json::array();
  for (int a = 0; a < net.species; ++a)
    for (int b = a; b < net.species; ++b)
      pairs.push_back({{"elements", {names[a], names[b]}}, {"D", 0.3 + 0.05 * (a + b)}, {"alpha", 1.4}, {"r0", 2.6 + 0.1 * (a + b)}});
  p["baseline"] = {{"kind", "morse"}, {"switch_inner", 3.0}, {"pairs", pairs}};
  file.parameters = p;
  return file;
}

}  // namespace distspec::test
