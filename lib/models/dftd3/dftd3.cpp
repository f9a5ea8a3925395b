#include "models/dftd3/dftd3.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "distspec/error.h"
#include "distspec/strict_json.h"
#include "models/json_fields.h"
#include "models/model_file.h"

namespace distspec::models::dftd3 {
namespace {

constexpr const char* kDampings[] = {"bj", "zero", "bjm", "zerom"};

Damping damping_of(const std::string& name) {
  for (Damping d : {Damping::bj, Damping::zero, Damping::bjm, Damping::zerom})
    if (name == damping_name(d)) return d;
  return Damping::bj;  // expect_choice let only the four names through
}

bool rational(Damping d) { return d == Damping::bj || d == Damping::bjm; }

// The functionals parametrised for a damping, for the message that names an unknown one.
std::string functionals_with(Damping damping) {
  std::string names;
  std::size_t count = 0;
  for (std::size_t k = 0; k < kFunctionalCount; ++k) {
    if (kFunctionals[k].damping != damping) continue;
    if (count++ < 12) names += (names.empty() ? "" : ", ") + std::string(kFunctionals[k].name);
  }
  return names + (count > 12 ? ", ... (" + std::to_string(count) + " in all)" : "");
}

// The functional's parameters with the model file's overrides; without a functional, every
// parameter the damping needs.
FunctionalParameters damping_parameters(const Json& params) {
  const Damping damping = damping_of(
      expect_choice(require_member(params, "damping", "/parameters", "one of bj, zero, bjm, zerom"),
                    "/parameters/damping", {std::begin(kDampings), std::end(kDampings)}));
  FunctionalParameters p{"", damping, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 14.0, 0.0};
  const Json* functional = find_member(params, "functional");
  if (functional) {
    const std::string name = expect_string(*functional, "/parameters/functional");
    const auto found = find_functional(name, damping);
    if (!found)
      fail_value("/parameters/functional",
                 "no D3(" + std::string(damping_name(damping)) + ") parameters for functional '" + name + "'",
                 "D3(" + std::string(damping_name(damping)) + ") is parametrised for " + functionals_with(damping) +
                     "; or drop \"functional\" and give the damping's parameters");
    p = *found;
  }
  // The parameters each damping reads, and those it cannot do without (given no functional).
  struct Key {
    const char* name;
    double FunctionalParameters::*field;
  };
  static const Key keys[] = {{"s6", &FunctionalParameters::s6},   {"s8", &FunctionalParameters::s8},
                             {"a1", &FunctionalParameters::a1},   {"a2", &FunctionalParameters::a2},
                             {"rs6", &FunctionalParameters::rs6}, {"rs8", &FunctionalParameters::rs8},
                             {"alpha", &FunctionalParameters::alpha}, {"beta", &FunctionalParameters::beta}};
  const bool bj = rational(damping);
  const std::vector<std::string> takes = bj ? std::vector<std::string>{"s6", "s8", "a1", "a2"}
                                       : damping == Damping::zero
                                           ? std::vector<std::string>{"s6", "s8", "rs6", "rs8", "alpha"}
                                           : std::vector<std::string>{"s6", "s8", "rs6", "rs8", "alpha", "beta"};
  const std::vector<std::string> needs = bj ? std::vector<std::string>{"s8", "a1", "a2"}
                                       : damping == Damping::zero ? std::vector<std::string>{"s8", "rs6"}
                                                                  : std::vector<std::string>{"s8", "rs6", "beta"};
  auto in = [](const std::vector<std::string>& names, const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const Key& k : keys) {
    const std::string pointer = std::string("/parameters/") + k.name;
    const Json* v = find_member(params, k.name);
    if (v && !in(takes, k.name))
      fail_value(pointer, std::string("'") + k.name + "' is not a parameter of " + damping_name(damping) + " damping",
                 std::string(damping_name(damping)) + " damping takes " + join_names(takes));
    if (v) p.*k.field = expect_finite(*v, pointer);
    else if (!functional && in(needs, k.name))
      throw Error(model_error_id::missing_key, pointer,
                  std::string("D3(") + damping_name(damping) + ") without a functional needs '" + k.name + "'",
                  "name a functional (\"functional\": \"pbe\"), or give " + join_names(needs));
  }
  if (bj && !(p.a1 * p.a1 + p.a2 * p.a2 > 0.0))
    fail_value("/parameters/a2", "a1 and a2 are both zero: the rational damping radius would vanish");
  if (!bj && !(p.rs6 > 0.0)) fail_value("/parameters/rs6", "rs6 must be positive");
  return p;
}

}  // namespace

Tables load_tables(const ModelFile& file) {
  try {
    const Json& params = expect_object(file.parameters, "/parameters",
                                       {"damping", "functional", "cn_cutoff", "c6_fallback", "s6", "s8", "a1", "a2", "rs6", "rs8",
                                        "alpha", "beta"});
    // The reference data and every parameter above are in Angstrom and eV.
    if (file.units != "metal")
      fail_value("/units", "DFT-D3 runs in metal units, the model file says " + file.units, "set \"units\": \"metal\"");
    Tables t;
    t.damping = damping_parameters(params);
    t.cutoff = file.cutoff;
    t.cn_cutoff = file.cutoff;
    if (const Json* cn = find_member(params, "cn_cutoff")) {
      t.cn_cutoff = expect_positive(*cn, "/parameters/cn_cutoff");
      // The coordination numbers read the model's edges, which end at the model cutoff.
      if (t.cn_cutoff > file.cutoff)
        fail_value("/parameters/cn_cutoff",
                   "the coordination-number cutoff " + Json(t.cn_cutoff).dump() + " exceeds the model cutoff " +
                       Json(file.cutoff).dump(),
                   "raise \"cutoff\" to at least cn_cutoff, or lower cn_cutoff");
    }
    if (const Json* fallback = find_member(params, "c6_fallback"))
      t.nearest_reference_fallback =
          expect_choice(*fallback, "/parameters/c6_fallback", {"none", "nearest_reference"}) == "nearest_reference";
    std::vector<const ReferenceElement*> refs;
    for (std::size_t k = 0; k < file.elements.size(); ++k) {
      const ReferenceElement* e = find_element(file.elements[k]);
      if (!e)
        fail_value("/elements/" + std::to_string(k), "element '" + file.elements[k] + "' has no DFT-D3 reference data",
                   "DFT-D3 covers H to Lr by their symbols (\"C\", \"Cu\"); map other atom types to NULL in pair_coeff");
      refs.push_back(e);
      Tables::Element el;
      el.rcov = e->rcov;
      el.r4r2 = e->r4r2;
      el.n_references = e->n_references;
      std::copy(e->cn, e->cn + e->n_references, el.cn.begin());
      t.elements.push_back(el);
    }
    const double c6_unit = kHartree * std::pow(kBohr, 6);
    const std::size_t n = refs.size();
    t.pairs.resize(n * n);
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t u = 0; u < n; ++u) {
        const ReferenceElement &a = *refs[s], &b = *refs[u];
        Tables::Pair& p = t.pairs[s * n + u];
        const std::size_t index = pair_index(a.z, b.z);
        p.rcov = a.rcov + b.rcov;
        p.c8_over_c6 = 3.0 * a.r4r2 * b.r4r2;
        p.r0 = rational(t.damping.damping) ? t.damping.a1 * std::sqrt(p.c8_over_c6) + t.damping.a2 : kR0ab[index];
        // The block is stored for the lower atomic number first.
        const double* block = kC6 + kC6Offsets[index];
        const bool swapped = a.z > b.z;
        for (int i = 0; i < a.n_references; ++i)
          for (int j = 0; j < b.n_references; ++j)
            p.c6[static_cast<std::size_t>(i * kMaxReferences + j)] =
                c6_unit * (swapped ? block[j * a.n_references + i] : block[i * b.n_references + j]);
      }
    return t;
  } catch (const Error& e) {
    if (e.file().empty()) throw e.with_file(file.path);
    throw;
  }
}

}  // namespace distspec::models::dftd3
