#include "models/mpnn/mpnn.h"

#include <optional>

#include "distspec/error.h"
#include "distspec/strict_json.h"
#include "models/model_file.h"

namespace distspec::models::mpnn {
namespace {

using tensor::Tensor;

int species_of(const std::string& name, const std::string& at, const std::vector<std::string>& elements) {
  for (std::size_t k = 0; k < elements.size(); ++k)
    if (elements[k] == name) return static_cast<int>(k);
  fail_value(at, "element '" + name + "' is not one of the model's elements",
             "the model's elements: " + join_names(elements));
}

std::vector<double> read_vector(const Json& value, const std::string& at, std::size_t expected) {
  const Json& list = expect_array(value, at);
  if (list.size() != expected)
    fail_value(at, "expected " + std::to_string(expected) + " numbers, found " + std::to_string(list.size()));
  std::vector<double> out;
  out.reserve(expected);
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(expect_finite(list[i], at + "/" + std::to_string(i)));
  return out;
}

// {"weight": [[out] x in], "bias": [out]}; `in` is fixed by the layer before, `out` by the
// first weight row unless the caller fixes it (0: any).
Dense<double> read_dense(const Json& value, const std::string& at, std::size_t in, std::size_t out,
                         const char* why_in) {
  const Json& d = expect_object(value, at, {"weight", "bias"});
  const std::string wat = at + "/weight";
  const Json& rows = expect_array(require_member(d, "weight", at), wat);
  if (rows.size() != in)
    fail_value(wat, "expected " + std::to_string(in) + " rows (" + why_in + "), found " + std::to_string(rows.size()));
  if (out == 0) {
    out = expect_array(rows[0], wat + "/0").size();
    if (out == 0) fail_value(wat + "/0", "a dense layer needs at least one output");
  }
  std::vector<double> w;
  w.reserve(in * out);
  for (std::size_t k = 0; k < in; ++k) {
    const std::vector<double> row = read_vector(rows[k], wat + "/" + std::to_string(k), out);
    w.insert(w.end(), row.begin(), row.end());
  }
  return {Tensor<double>(in, out, std::move(w)),
          Tensor<double>(1, out, read_vector(require_member(d, "bias", at), at + "/bias", out))};
}

// [D(in -> hidden), D(hidden -> out)]
std::vector<Dense<double>> read_mlp(const Json& value, const std::string& at, std::size_t in, std::size_t out,
                                    const char* why_in) {
  const Json& list = expect_array(value, at);
  if (list.size() != 2) fail_value(at, "expected two dense layers, found " + std::to_string(list.size()));
  std::vector<Dense<double>> mlp;
  mlp.push_back(read_dense(list[0], at + "/0", in, 0, why_in));
  mlp.push_back(read_dense(list[1], at + "/1", mlp[0].weight.cols(), out, "the outputs of the layer before"));
  return mlp;
}

RadialBasis read_basis(const Json& value, double cutoff) {
  const std::string at = "/parameters/radial_basis";
  const Json& b = expect_object(value, at, {"kind", "size", "start", "stop", "width"});
  RadialBasis basis;
  const std::string kind = expect_choice(require_member(b, "kind", at), at + "/kind", {"gaussian", "bessel"});
  basis.size = expect_int(require_member(b, "size", at), at + "/size");
  if (basis.size < 1 || basis.size > 1024)
    fail_value(at + "/size", "expected 1 to 1024 basis functions, found " + std::to_string(basis.size));
  basis.cutoff = cutoff;
  if (kind == "bessel") {
    basis.kind = RadialBasis::Kind::bessel;
    for (const char* key : {"start", "stop", "width"})
      if (find_member(b, key))
        fail_value(at + "/" + key, "a bessel basis takes no '" + std::string(key) + "'", "it spans (0, cutoff)");
    return basis;
  }
  basis.kind = RadialBasis::Kind::gaussian;
  basis.start = expect_finite(require_member(b, "start", at), at + "/start");
  basis.stop = expect_finite(require_member(b, "stop", at), at + "/stop");
  basis.width = expect_positive(require_member(b, "width", at), at + "/width");
  if (basis.stop < basis.start) fail_value(at + "/stop", "expected stop >= start");
  return basis;
}

// {element: number}; elements left out get `fallback`.
std::vector<double> read_per_element(const Json& value, const std::string& at, const std::vector<std::string>& elements,
                                     double fallback) {
  if (!value.is_object())
    throw Error(model_error_id::type, at, "expected an object {element: number}, found " + json_type_phrase(value));
  for (const auto& [name, v] : value.items()) species_of(name, at + "/" + json_pointer_token(name), elements);
  std::vector<double> out;
  for (const std::string& name : elements) {
    const Json* v = find_member(value, name.c_str());
    out.push_back(v ? expect_finite(*v, at + "/" + json_pointer_token(name)) : fallback);
  }
  return out;
}

Tensor<double> read_embedding(const Json& value, const std::vector<std::string>& elements, std::size_t features) {
  const std::string at = "/parameters/embedding";
  if (!value.is_object())
    throw Error(model_error_id::type, at, "expected an object {element: [features]}, found " + json_type_phrase(value));
  for (const auto& [name, v] : value.items()) species_of(name, at + "/" + json_pointer_token(name), elements);
  std::vector<double> rows;
  for (const std::string& name : elements) {
    const std::string eat = at + "/" + json_pointer_token(name);
    const std::vector<double> row =
        read_vector(require_member(value, name.c_str(), at, "every element needs an embedding row"), eat, features);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return Tensor<double>(elements.size(), features, std::move(rows));
}

void read_baseline(const Json& value, const std::vector<std::string>& elements, Params& p) {
  const std::string at = "/parameters/baseline";
  const Json& b = expect_object(value, at, {"kind", "switch_inner", "pairs"});
  expect_choice(require_member(b, "kind", at), at + "/kind", {"morse"});
  p.baseline_switch.inner = expect_non_negative(require_member(b, "switch_inner", at), at + "/switch_inner");
  p.baseline_switch.outer = p.cutoff;
  if (!(p.baseline_switch.inner < p.cutoff))
    fail_value(at + "/switch_inner", "the switch must start below the cutoff " + Json(p.cutoff).dump());

  const std::size_t n = elements.size();
  std::vector<std::optional<Morse>> given(n * n);
  const Json& pairs = expect_array(require_member(b, "pairs", at), at + "/pairs");
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const std::string pat = at + "/pairs/" + std::to_string(k);
    const Json& pair = expect_object(pairs[k], pat, {"elements", "D", "alpha", "r0"});
    const Json& names = expect_array(require_member(pair, "elements", pat), pat + "/elements");
    if (names.size() != 2)
      fail_value(pat + "/elements", "expected two element names, found " + std::to_string(names.size()));
    const int a = species_of(expect_string(names[0], pat + "/elements/0"), pat + "/elements/0", elements);
    const int c = species_of(expect_string(names[1], pat + "/elements/1"), pat + "/elements/1", elements);
    Morse m;
    m.D = expect_non_negative(require_member(pair, "D", pat), pat + "/D");
    m.alpha = expect_positive(require_member(pair, "alpha", pat), pat + "/alpha");
    m.r0 = expect_positive(require_member(pair, "r0", pat), pat + "/r0");
    if (given[a * n + c])
      fail_value(pat, "pair " + elements[a] + " " + elements[c] + " is given twice", "list each pair once");
    given[a * n + c] = given[c * n + a] = m;
  }
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t c = 0; c < n; ++c) {
      if (!given[a * n + c])
        fail_value(at + "/pairs", "no Morse pair " + elements[a] + " " + elements[c] + " is given",
                   "list every pair of elements once");
      p.morse.push_back(*given[a * n + c]);
    }
}

}  // namespace

Params parse_params(const Json& parameters, const std::vector<std::string>& elements, double cutoff) {
  const std::string at = "/parameters";
  const Json& root = expect_object(parameters, at,
                                   {"features", "precision", "activation", "radial_basis", "embedding", "layers",
                                    "readout", "reference_energy", "baseline"});
  Params p;
  p.n_species = static_cast<int>(elements.size());
  p.cutoff = cutoff;
  p.features = expect_int(require_member(root, "features", at), at + "/features");
  if (p.features < 1) fail_value(at + "/features", "expected at least one feature channel");
  const auto features = static_cast<std::size_t>(p.features);
  if (const Json* v = find_member(root, "precision"))
    p.precision = expect_choice(*v, at + "/precision", {"fp64", "fp32"}) == "fp64" ? Precision::fp64 : Precision::fp32;
  p.activation =
      expect_choice(require_member(root, "activation", at), at + "/activation", {"shifted_softplus", "silu"}) == "silu"
          ? Activation::silu
          : Activation::shifted_softplus;
  p.basis = read_basis(require_member(root, "radial_basis", at), cutoff);
  p.weights.embedding = read_embedding(require_member(root, "embedding", at), elements, features);

  const Json& layers = expect_array(require_member(root, "layers", at), at + "/layers");
  if (layers.empty() || layers.size() > static_cast<std::size_t>(kMaxLayers))
    fail_value(at + "/layers", "expected 1 to " + std::to_string(kMaxLayers) + " interaction layers, found " +
                                   std::to_string(layers.size()));
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string lat = at + "/layers/" + std::to_string(l);
    const Json& layer = expect_object(layers[l], lat, {"filter", "update"});
    Interaction<double> block;
    block.filter = read_dense(require_member(layer, "filter", lat), lat + "/filter",
                              static_cast<std::size_t>(p.basis.size), features, "one per radial basis function");
    block.update =
        read_mlp(require_member(layer, "update", lat), lat + "/update", features, features, "one per feature");
    p.weights.layers.push_back(std::move(block));
  }
  p.weights.readout = read_mlp(require_member(root, "readout", at), at + "/readout", features, 1, "one per feature");

  p.reference_energy.assign(elements.size(), 0.0);
  if (const Json* v = find_member(root, "reference_energy"))
    p.reference_energy = read_per_element(*v, at + "/reference_energy", elements, 0.0);
  read_baseline(require_member(root, "baseline", at), elements, p);
  return p;
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  ModelInfo info = info_from(file);
  info.forces_on_halo_rows = true;
  return with_model_file_errors(file, [&]() -> std::unique_ptr<Model> {
    require_inline_parameters(file, "mpnn");
    Params params = parse_params(file.parameters, file.elements, file.cutoff);
    if (!file.precision.empty()) params.precision = file.precision == "fp32" ? Precision::fp32 : Precision::fp64;
    if (device == Device::cuda) {
      if constexpr (kCudaBuild) return make_cuda_model(std::move(info), std::move(params));
      throw_no_cuda("mpnn");
    }
    return make_model(std::move(info), std::move(params));
  });
}

}  // namespace distspec::models::mpnn
