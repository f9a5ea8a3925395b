#include "models/lj/lj.h"

#include <cmath>
#include <optional>

#include "distspec/error.h"
#include "models/edge_kernel.h"
#include "models/model_file.h"

namespace distspec::models::lj {
namespace {

enum class Mixing { geometric, arithmetic, sixthpower };

// Pair::mix_energy (pair.cpp).
double mix_energy(Mixing m, double eps1, double eps2, double sig1, double sig2) {
  if (m == Mixing::sixthpower)
    return 2.0 * std::sqrt(eps1 * eps2) * std::pow(sig1, 3.0) * std::pow(sig2, 3.0) /
           (std::pow(sig1, 6.0) + std::pow(sig2, 6.0));
  return std::sqrt(eps1 * eps2);
}

// Pair::mix_distance (pair.cpp), for sigma and the cutoff alike.
double mix_distance(Mixing m, double sig1, double sig2) {
  switch (m) {
    case Mixing::geometric: return std::sqrt(sig1 * sig2);
    case Mixing::arithmetic: return 0.5 * (sig1 + sig2);
    case Mixing::sixthpower: return std::pow(0.5 * (std::pow(sig1, 6.0) + std::pow(sig2, 6.0)), 1.0 / 6.0);
  }
  return 0.0;
}

// pair_lj_cut.cpp init_one().
PairCoeff coeff_of(const PairParams& p, bool shift) {
  PairCoeff c;
  c.lj1 = 48.0 * p.epsilon * std::pow(p.sigma, 12.0);
  c.lj2 = 24.0 * p.epsilon * std::pow(p.sigma, 6.0);
  c.lj3 = 4.0 * p.epsilon * std::pow(p.sigma, 12.0);
  c.lj4 = 4.0 * p.epsilon * std::pow(p.sigma, 6.0);
  if (shift) {
    const double ratio = p.sigma / p.cutoff;
    c.offset = 4.0 * p.epsilon * (std::pow(ratio, 12.0) - std::pow(ratio, 6.0));
  }
  c.cutsq = p.cutoff * p.cutoff;
  return c;
}

int species_of(const Json& name, const std::string& at, const std::vector<std::string>& elements) {
  const std::string s = expect_string(name, at);
  for (std::size_t k = 0; k < elements.size(); ++k)
    if (elements[k] == s) return static_cast<int>(k);
  fail_value(at, "element '" + s + "' is not one of the model's elements", "the model's elements: " + join_names(elements));
}

class LJModel final : public Model {
 public:
  LJModel(ModelInfo info, Params params) : info_(std::move(info)), params_(std::move(params)) {}

  const ModelInfo& info() const override { return info_; }

  // One op: pair energy (when asked), forces and virial (when asked), on the receivers and,
  // under a half_newton_on list, on halo rows.
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    out.reset(graph.n_rows(), request);
    const bool energy = request.energy || request.energy_rows;
    std::vector<double>& energy_rows = request.energy_rows ? out.energy_rows : scratch_energy_;
    energy_rows.assign(energy ? graph.n_rows() : 0, 0.0);
    const bool virial = request.virial || request.virial_rows;
    const EdgeOpState<Params> state{&params_, edge_call(graph, index_checks_, request, &thread_rows_)};
    dispatch.call(virial ? kEnergyForcesVirialOp : kEnergyForcesOp, edge_args(graph),
                  pair_output_refs(out, energy_rows, virial), state);
    out.energy = pair_energy(energy_rows, graph);
  }

 private:
  ModelInfo info_;
  Params params_;
  std::vector<double> scratch_energy_;  // per-row energy when the host does not want it
  IndexCheckSchedule index_checks_;
  ThreadRows<double> thread_rows_;
};

}  // namespace

Params parse_params(const Json& parameters, const std::vector<std::string>& elements, double cutoff) {
  const Json& root = expect_object(parameters, "/parameters", {"pairs", "shift", "mixing"});
  Params params;
  params.n_species = static_cast<int>(elements.size());
  if (const Json* shift = find_member(root, "shift")) params.shift = expect_bool(*shift, "/parameters/shift");
  Mixing mixing = Mixing::geometric;  // LAMMPS' default pair_modify mix
  if (const Json* m = find_member(root, "mixing")) {
    const std::string name = expect_choice(*m, "/parameters/mixing", {"geometric", "arithmetic", "sixthpower"});
    mixing = name == "geometric" ? Mixing::geometric : name == "arithmetic" ? Mixing::arithmetic : Mixing::sixthpower;
  }

  const std::size_t n = elements.size();
  std::vector<std::optional<PairParams>> given(n * n);
  const Json& pairs = expect_array(require_member(root, "pairs", "/parameters"), "/parameters/pairs");
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const std::string at = "/parameters/pairs/" + std::to_string(k);
    const Json& pair = expect_object(pairs[k], at, {"elements", "epsilon", "sigma", "cutoff"});
    const Json& names = expect_array(require_member(pair, "elements", at), at + "/elements");
    if (names.size() != 2)
      fail_value(at + "/elements", "expected two element names, found " + std::to_string(names.size()));
    const int a = species_of(names[0], at + "/elements/0", elements);
    const int b = species_of(names[1], at + "/elements/1", elements);
    PairParams p;
    p.epsilon = expect_non_negative(require_member(pair, "epsilon", at), at + "/epsilon");
    p.sigma = expect_positive(require_member(pair, "sigma", at), at + "/sigma");
    p.cutoff = cutoff;
    if (const Json* c = find_member(pair, "cutoff")) {
      p.cutoff = expect_positive(*c, at + "/cutoff");
      if (p.cutoff > cutoff)
        fail_value(at + "/cutoff", "pair cutoff " + c->dump() + " exceeds the model cutoff " + Json(cutoff).dump(),
                   "the model cutoff is the neighbour-list cutoff: raise it to the largest pair cutoff");
    }
    if (given[params.index(a, b)])
      fail_value(at, "pair " + elements[a] + " " + elements[b] + " is given twice", "list each pair once");
    given[params.index(a, b)] = given[params.index(b, a)] = p;
  }

  params.pairs.resize(n * n);
  params.coeffs.resize(n * n);
  for (int a = 0; a < params.n_species; ++a) {
    const auto& self = given[params.index(a, a)];
    if (!self)
      fail_value("/parameters/pairs", "no pair " + elements[a] + " " + elements[a] + " is given",
                 "every element needs its self pair (LAMMPS: all pair coeffs are not set); cross pairs are mixed");
  }
  for (int a = 0; a < params.n_species; ++a)
    for (int b = 0; b < params.n_species; ++b) {
      PairParams p;
      if (const auto& g = given[params.index(a, b)]) {
        p = *g;
      } else {
        const PairParams& pa = *given[params.index(a, a)];
        const PairParams& pb = *given[params.index(b, b)];
        p.epsilon = mix_energy(mixing, pa.epsilon, pb.epsilon, pa.sigma, pb.sigma);
        p.sigma = mix_distance(mixing, pa.sigma, pb.sigma);
        p.cutoff = mix_distance(mixing, pa.cutoff, pb.cutoff);
      }
      params.pairs[params.index(a, b)] = p;
      const PairCoeff c = coeff_of(p, params.shift);
      // Finite epsilon and sigma can still overflow sigma^12: forces would be inf or NaN.
      if (!(std::isfinite(c.lj1) && std::isfinite(c.lj3) && std::isfinite(c.offset)))
        fail_value("/parameters/pairs", "pair " + elements[a] + " " + elements[b] + ": epsilon " + Json(p.epsilon).dump() +
                                            " and sigma " + Json(p.sigma).dump() + " overflow 48 epsilon sigma^12",
                   "is sigma in the model's length unit?");
      params.coeffs[params.index(a, b)] = c;
    }
  return params;
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  ModelInfo info = info_from(file);
  info.ops = {kEnergyForcesOp, kEnergyForcesVirialOp};
  return with_model_file_errors(file, [&]() -> std::unique_ptr<Model> {
    require_inline_parameters(file, "lj");
    Params params = parse_params(file.parameters, file.elements, file.cutoff);
    if (device == Device::cuda) {
      if constexpr (kCudaBuild) return make_cuda_model(std::move(info), std::move(params));
      throw_no_cuda("lj");
    }
    // The CPU kernel takes LAMMPS' half lists, as lj/cut does (the CUDA one walks full lists).
    info.half_list = EdgeList::half_newton_on;
    return std::make_unique<LJModel>(std::move(info), std::move(params));
  });
}

}  // namespace distspec::models::lj
