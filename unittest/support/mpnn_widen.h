// A wider copy of an MPNN parameter set that computes exactly the same energy: every feature
// channel repeated `factor` times (embedding rows and filter columns tiled, the update MLP
// block-diagonal, the readout reading the first copy only). h_l is then the original h_l
// repeated, the extra copies add exact zeros to every sum that reaches the energy, and the
// network has factor x F features and factor x H hidden units: a way to run F = 128 from the
// F = 64 test potentials (benchmarks), and a check of the wide code paths against the narrow
// ones (GPU tests).
#pragma once

#include <cstddef>

#include "models/json_fields.h"

namespace distspec::test {

inline models::Json widen_mpnn_parameters(const models::Json& p, int factor) {
  using models::Json;
  auto tile = [&](const Json& row) {
    Json out = Json::array();
    for (int a = 0; a < factor; ++a)
      for (const Json& v : row) out.push_back(v);
    return out;
  };
  // W (in x out) -> block-diagonal (factor in x factor out).
  auto block_diagonal = [&](const Json& w) {
    const std::size_t in = w.size(), out = w[0].size();
    Json m = Json::array();
    for (int a = 0; a < factor; ++a)
      for (std::size_t i = 0; i < in; ++i) {
        Json row = Json::array();
        for (int b = 0; b < factor; ++b)
          for (std::size_t o = 0; o < out; ++o) row.push_back(a == b ? w[i][o] : Json(0.0));
        m.push_back(row);
      }
    return m;
  };
  Json q = p;
  q["features"] = p["features"].get<int>() * factor;
  for (auto& [element, row] : q["embedding"].items()) row = tile(p["embedding"][element]);
  for (std::size_t l = 0; l < p["layers"].size(); ++l) {
    const Json& layer = p["layers"][l];
    Json& wide = q["layers"][l];
    for (std::size_t k = 0; k < layer["filter"]["weight"].size(); ++k)
      wide["filter"]["weight"][k] = tile(layer["filter"]["weight"][k]);
    wide["filter"]["bias"] = tile(layer["filter"]["bias"]);
    for (int d = 0; d < 2; ++d) {
      wide["update"][d]["weight"] = block_diagonal(layer["update"][d]["weight"]);
      wide["update"][d]["bias"] = tile(layer["update"][d]["bias"]);
    }
  }
  // The readout's first layer reads copy 0 and gives the other copies zero weight.
  const Json& w = p["readout"][0]["weight"];
  Json r = Json::array();
  for (int a = 0; a < factor; ++a)
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (a == 0) {
        r.push_back(w[i]);
        continue;
      }
      Json zeros = Json::array();
      for (std::size_t o = 0; o < w[i].size(); ++o) zeros.push_back(0.0);
      r.push_back(zeros);
    }
  q["readout"][0]["weight"] = r;
  return q;
}

}  // namespace distspec::test
