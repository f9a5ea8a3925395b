#include "case_file.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "lammps_session.h"

namespace distspec::testing {
namespace {

using Json = nlohmann::json;

// A case file's problem: the JSON path and what was expected there.
struct CaseError : std::runtime_error {
  CaseError(const std::string& path, const std::string& what) : std::runtime_error(path + ": " + what) {}
};

// Reads one object's keys, each at most once, and rejects keys it was never asked for (a typo
// would otherwise drop a variant or a reference without a word).
class Fields {
 public:
  Fields(const Json& j, std::string path) : j_(j), path_(std::move(path))
  {
    if (!j_.is_object()) throw CaseError(path_, "expected an object");
  }

  bool has(const std::string& key) const { return j_.contains(key); }
  std::string at(const std::string& key) const { return path_ + "/" + key; }

  const Json& get(const std::string& key)
  {
    used_.insert(key);
    if (!j_.contains(key)) throw CaseError(at(key), "missing");
    return j_.at(key);
  }
  std::string string(const std::string& key, const std::string& fallback)
  {
    if (!has(key)) return fallback;
    const Json& v = get(key);
    if (!v.is_string()) throw CaseError(at(key), "expected a string");
    return v.get<std::string>();
  }
  double number(const std::string& key, double fallback)
  {
    if (!has(key)) return fallback;
    const Json& v = get(key);
    if (!v.is_number()) throw CaseError(at(key), "expected a number");
    return v.get<double>();
  }
  bool boolean(const std::string& key, bool fallback)
  {
    if (!has(key)) return fallback;
    const Json& v = get(key);
    if (!v.is_boolean()) throw CaseError(at(key), "expected true or false");
    return v.get<bool>();
  }
  std::vector<std::string> lines(const std::string& key)
  {
    if (!has(key)) return {};
    const Json& v = get(key);
    std::vector<std::string> out;
    if (!v.is_array()) throw CaseError(at(key), "expected an array of strings (input lines)");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) throw CaseError(at(key) + "/" + std::to_string(i), "expected a string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  // An array of strings each from `allowed`.
  std::vector<std::string> choices(const std::string& key, const std::vector<std::string>& allowed,
                                   const std::vector<std::string>& fallback)
  {
    if (!has(key)) return fallback;
    std::vector<std::string> out = lines(key);
    if (out.empty()) throw CaseError(at(key), "expected at least one value");
    for (std::size_t i = 0; i < out.size(); ++i)
      if (std::find(allowed.begin(), allowed.end(), out[i]) == allowed.end())
        throw CaseError(at(key) + "/" + std::to_string(i), "'" + out[i] + "' is not one of " + listed(allowed));
    return out;
  }
  std::string choice(const std::string& key, const std::vector<std::string>& allowed, const std::string& fallback)
  {
    const std::string v = string(key, fallback);
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      throw CaseError(at(key), "'" + v + "' is not one of " + listed(allowed));
    return v;
  }

  // Call after reading: any key left is unknown.
  void done() const
  {
    for (const auto& item : j_.items())
      if (!used_.count(item.key())) throw CaseError(at(item.key()), "unknown key (see unittest/integration/cases/README.md)");
  }

  static std::string listed(const std::vector<std::string>& values)
  {
    std::string s;
    for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
    return s;
  }

 private:
  const Json& j_;
  std::string path_;
  std::set<std::string> used_;
};

std::vector<int> read_ranks(Fields& f)
{
  std::vector<int> out;
  if (!f.has("ranks")) return out;
  const Json& r = f.get("ranks");
  if (!r.is_array() || r.empty()) throw CaseError(f.at("ranks"), "expected an array of rank counts");
  for (const Json& n : r) {
    if (!n.is_number_integer() || n.get<int>() < 1) throw CaseError(f.at("ranks"), "expected positive integers");
    out.push_back(n.get<int>());
  }
  return out;
}

Tolerance read_tolerance(const Json& j, const std::string& path, Tolerance t)
{
  if (j.is_number()) {
    const double v = j.get<double>();
    return {v, v, v, v, v, v, t.absolute_per_atom};
  }
  Fields f(j, path);
  // null: the observable is not compared (one the reference defines differently).
  auto bound = [&](const std::string& key, double fallback) {
    return f.has(key) && f.get(key).is_null() ? INFINITY : f.number(key, fallback);
  };
  t.pe = bound("pe", t.pe);
  t.forces = bound("forces", t.forces);
  t.virial = bound("virial", t.virial);
  t.energy_atom = bound("energy_atom", t.energy_atom);
  t.virial_atom = bound("virial_atom", t.virial_atom);
  t.positions = bound("positions", t.positions);
  t.absolute_per_atom = f.boolean("absolute_per_atom", t.absolute_per_atom);
  f.done();
  return t;
}

const std::vector<std::string> kStyles = {"plain", "threads", "kk", "kk_package", "kk_host", "kk_gpu"};

Reference read_reference(const Json& j, const std::string& path, const Tolerance& tolerance)
{
  Fields f(j, path);
  Reference r;
  const std::string kind =
      f.choice("kind", {"pair_lines", "default_variant", "one_rank", "periodic_images", "reference_file"}, "pair_lines");
  r.kind = kind == "pair_lines"        ? Reference::Kind::pair_lines
           : kind == "default_variant" ? Reference::Kind::default_variant
           : kind == "one_rank"        ? Reference::Kind::one_rank
           : kind == "periodic_images" ? Reference::Kind::periodic_images
                                       : Reference::Kind::reference_file;
  r.name = f.string("name", kind);
  r.pair = f.lines("pair");
  r.args = f.lines("args");
  r.same_args = f.boolean("same_args", false);
  if (r.same_args && !r.args.empty()) throw CaseError(f.at("args"), "give args or same_args, not both");
  r.file = f.string("file", "");
  if ((r.kind == Reference::Kind::reference_file) != !r.file.empty())
    throw CaseError(f.at("file"), "a reference_file reference, and only it, names its file");
  if ((r.kind == Reference::Kind::pair_lines) != !r.pair.empty())
    throw CaseError(f.at("pair"), r.kind == Reference::Kind::pair_lines ? "a pair_lines reference needs its pair lines"
                                                                       : "only a pair_lines reference takes pair lines");
  r.tolerance = f.has("tolerance") ? read_tolerance(f.get("tolerance"), f.at("tolerance"), tolerance) : tolerance;
  if (r.kind == Reference::Kind::periodic_images || r.kind == Reference::Kind::reference_file) {
    // Evaluated outside LAMMPS at the run's own positions: no per-atom virial, no positions of
    // its own. A bound the case sets for all its references does not apply; one set here is a
    // comparison that could never fail.
    const Json* own = f.has("tolerance") && f.get("tolerance").is_object() ? &f.get("tolerance") : nullptr;
    for (const auto& [key, bound] : {std::pair{"virial_atom", &r.tolerance.virial_atom},
                                     std::pair{"positions", &r.tolerance.positions}}) {
      if (own && own->contains(key) && !(*own)[key].is_null())
        throw CaseError(f.at("tolerance") + "/" + key,
                        "a " + kind + " reference computes no " + key + ": leave this bound out (or null)");
      *bound = INFINITY;
    }
  }
  r.must_differ = f.boolean("must_differ", false);
  f.done();
  return r;
}

std::string replaced(std::string text, const std::string& from, const std::string& to, const std::string& path)
{
  const auto at = text.find(from);
  if (at == std::string::npos) throw CaseError(path, "'" + from + "' is not in the deck");
  return text.replace(at, from.size(), to);
}

std::vector<std::string> split_lines(const std::string& text)
{
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

ErrorRow read_error(const Json& j, const std::string& path, const Case& c)
{
  Fields f(j, path);
  ErrorRow e;
  e.name = f.string("name", "");
  if (e.name.empty()) throw CaseError(f.at("name"), "expected a name (letters, digits, _)");
  e.deck = f.has("deck") ? f.lines("deck") : c.deck;
  if (f.has("deck_replace")) {
    const Json& edits = f.get("deck_replace");
    std::string text = join(e.deck);
    if (!edits.is_array()) throw CaseError(f.at("deck_replace"), "expected an array of [from, to] pairs");
    for (std::size_t i = 0; i < edits.size(); ++i) {
      const std::string at = f.at("deck_replace") + "/" + std::to_string(i);
      if (!edits[i].is_array() || edits[i].size() != 2 || !edits[i][0].is_string() || !edits[i][1].is_string())
        throw CaseError(at, "expected [from, to], two strings");
      text = replaced(text, edits[i][0].get<std::string>(), edits[i][1].get<std::string>(), at);
    }
    e.deck = split_lines(text);
  }
  for (const std::string& line : f.lines("deck_append")) e.deck.push_back(line);
  e.pair = f.has("pair") ? f.lines("pair") : c.pair;
  e.style = f.choice("style", kStyles, "plain");
  e.expected = f.lines("expected");
  e.ranks = read_ranks(f);
  if (e.expected.empty()) throw CaseError(f.at("expected"), "expected the parts of the error message, at least one");
  f.done();
  return e;
}

Case read_case(const std::string& file)
{
  std::ifstream in(file);
  if (!in) throw CaseError(file, "cannot read");
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw CaseError(file, std::string("invalid JSON: ") + e.what());
  }
  Fields f(j, "");
  Case c;
  c.file = file;
  c.name = std::filesystem::path(file).stem().string();
  c.description = f.string("description", "");
  c.check = f.choice("check", {"observables", "nve_drift", "masses"}, "observables");
  c.deck = f.lines("deck");
  if (c.deck.empty()) throw CaseError("/deck", "expected the deck's lines (box and atoms)");
  c.pair = f.lines("pair");
  if (c.pair.empty()) throw CaseError("/pair", "expected the pair lines under test");
  c.md = f.lines("md");
  c.ranks = read_ranks(f);
  Tolerance tolerance;
  if (f.has("tolerance")) tolerance = read_tolerance(f.get("tolerance"), "/tolerance", tolerance);

  // The variants: the product of the listed values, or the union of several such products.
  auto add_variants = [&](const Json& j, const std::string& path) {
    std::vector<std::string> newton{"on"}, style{"plain"}, halo{""}, input{"create_atoms"}, device{"cpu"};
    Fields v(j, path);
    newton = v.choices("newton", {"on", "off"}, newton);
    style = v.choices("style", kStyles, style);
    halo = v.choices("halo", {"per_layer", "expanded"}, halo);
    input = v.choices("input", {"create_atoms", "read_data", "restart"}, input);
    device = v.choices("device", {"cpu", "cuda"}, device);
    v.done();
    for (const auto& n : newton)
      for (const auto& s : style)
        for (const auto& h : halo)
          for (const auto& i : input)
            for (const auto& d : device) {
              const Variant variant{n, s, h, i, d};
              const bool listed = std::any_of(c.variants.begin(), c.variants.end(),
                                              [&](const Variant& other) { return other.name() == variant.name(); });
              if (!listed) c.variants.push_back(variant);
            }
  };
  if (!f.has("variants")) {
    add_variants(Json::object(), "/variants");
  } else if (const Json& v = f.get("variants"); v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) add_variants(v[i], "/variants/" + std::to_string(i));
  } else {
    add_variants(v, "/variants");
  }

  if (f.has("references")) {
    const Json& refs = f.get("references");
    if (!refs.is_array() || refs.empty()) throw CaseError("/references", "expected an array of references");
    for (std::size_t i = 0; i < refs.size(); ++i)
      c.references.push_back(read_reference(refs[i], "/references/" + std::to_string(i), tolerance));
  }
  c.log_lines = f.lines("log_lines");
  c.log_line_count = static_cast<std::size_t>(f.number("log_line_count", 0));

  if (f.has("nve_drift")) {
    Fields n(f.get("nve_drift"), "/nve_drift");
    c.steps = static_cast<int>(n.number("steps", 0));
    c.timestep = n.number("timestep", 0.0);
    c.max_drift_per_atom = n.number("max_per_atom", 0.0);
    c.reference_pair = n.lines("no_worse_than");
    c.factor = n.number("factor", c.factor);
    c.slack = n.number("slack", c.slack);
    n.done();
    if (c.steps <= 0 || c.timestep <= 0.0) throw CaseError("/nve_drift", "expected steps and timestep above 0");
    if ((c.max_drift_per_atom > 0.0) == !c.reference_pair.empty())
      throw CaseError("/nve_drift", "expected one bound: max_per_atom, or no_worse_than (pair lines)");
  }
  if ((c.check == "nve_drift") != f.has("nve_drift"))
    throw CaseError("/nve_drift", "given exactly when check is nve_drift");
  if (c.check != "nve_drift" && c.references.empty())
    throw CaseError("/references", "expected at least one reference for check " + c.check);

  if (f.has("errors")) {
    const Json& rows = f.get("errors");
    if (!rows.is_array()) throw CaseError("/errors", "expected an array of error rows");
    for (std::size_t i = 0; i < rows.size(); ++i) c.errors.push_back(read_error(rows[i], "/errors/" + std::to_string(i), c));
  }
  f.done();
  return c;
}

// The cases, read once; they live as long as the test program.
struct Catalogue {
  std::vector<std::unique_ptr<Case>> cases;
  std::vector<CaseRun> runs, errors;
};

const Catalogue& catalogue(const std::string& folder)
{
  static std::map<std::string, Catalogue> loaded;
  auto found = loaded.find(folder);
  if (found != loaded.end()) return found->second;
  Catalogue& cat = loaded[folder];
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) cat.runs.push_back({nullptr, {}, "no_cases", -1, folder + ": no case files (*.json)"});
  for (const std::string& file : files) {
    const std::string stem = std::filesystem::path(file).stem().string();
    try {
      cat.cases.push_back(std::make_unique<Case>(read_case(file)));
    } catch (const std::exception& e) {
      const std::string where = e.what();
      cat.runs.push_back({nullptr, {}, stem, -1, file + (where.rfind(file, 0) == 0 ? where.substr(file.size()) : ": " + where)});
      continue;
    }
    const Case& c = *cat.cases.back();
    for (const Variant& v : c.variants) {
      const std::string tag = v.name();
      cat.runs.push_back({&c, v, c.name + (tag.empty() ? "" : "_" + tag), -1, ""});
    }
    for (std::size_t i = 0; i < c.errors.size(); ++i)
      cat.errors.push_back({&c, {}, c.name + "_" + c.errors[i].name, static_cast<int>(i), ""});
  }
  return cat;
}

}  // namespace

std::string Variant::name() const
{
  std::string s = "newton_" + newton;
  if (style != "plain") s += "_" + style;
  if (!halo.empty()) s += "_" + halo;
  if (input != "create_atoms") s += "_" + input;
  if (device != "cpu") s += "_" + device;
  return s;
}

const std::vector<CaseRun>& case_runs(const std::string& folder) { return catalogue(folder).runs; }
const std::vector<CaseRun>& error_runs(const std::string& folder) { return catalogue(folder).errors; }

std::string expand(std::string line, const std::string& tmp)
{
#ifdef DISTSPEC_TORCH_FIXTURES
  const char* env = std::getenv("DISTSPEC_TORCH_FIXTURES");
  const std::string fixtures = env && *env ? env : DISTSPEC_TORCH_FIXTURES;
#else
  const std::string fixtures = "(a build without the torch kind has no torch fixtures)";
#endif
  const std::pair<std::string, std::string> names[] = {{"${potentials}", source_dir() + "/potentials"},
                                                       {"${cases}", DISTSPEC_CASES_DIR},
                                                       {"${torch_fixtures}", fixtures},
                                                       {"${ranks}", std::to_string(world_size())},
                                                       {"${tmp}", tmp}};
  for (const auto& [from, to] : names)
    for (auto at = line.find(from); at != std::string::npos; at = line.find(from, at + to.size()))
      line.replace(at, from.size(), to);
  return line;
}

std::string join(const std::vector<std::string>& lines)
{
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

}  // namespace distspec::testing
