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
#include <sstream>
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
  if (f.has("md")) {
    if (r.kind != Reference::Kind::pair_lines) throw CaseError(f.at("md"), "only a pair_lines reference runs md lines of its own");
    r.md = f.lines("md");
  }
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
    // Evaluated outside LAMMPS at the run's own positions: no positions of its own, and no
    // per-atom virial unless a reference file holds one (its "virial_atom"), which only a bound
    // in its own tolerance compares. A bound the case sets for all its references does not apply;
    // one set here where nothing is computed is a comparison that could never fail.
    const Json* own = f.has("tolerance") && f.get("tolerance").is_object() ? &f.get("tolerance") : nullptr;
    for (const auto& [key, bound] : {std::pair{"virial_atom", &r.tolerance.virial_atom},
                                     std::pair{"positions", &r.tolerance.positions}}) {
      const bool bounded = own && own->contains(key) && !(*own)[key].is_null();
      if (bounded && r.kind == Reference::Kind::reference_file && std::string(key) == "virial_atom") continue;
      if (bounded)
        throw CaseError(f.at("tolerance") + "/" + key,
                        "a " + kind + " reference computes no " + key + ": leave this bound out (or null)");
      *bound = INFINITY;
    }
  }
  r.must_differ = f.boolean("must_differ", false);
  r.requires_style = f.string("requires_style", "");
  if (!r.requires_style.empty() && r.kind != Reference::Kind::pair_lines)
    throw CaseError(f.at("requires_style"), "only a pair_lines reference runs a LAMMPS style of its own");
  if (!r.requires_style.empty() && r.requires_style.find(' ') == std::string::npos)
    throw CaseError(f.at("requires_style"), "expected '<category> <style>', e.g. 'pair dispersion/d3'");
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

// `[[from, to], ...]`: the replacements of a deck or a file.
std::vector<std::pair<std::string, std::string>> read_replacements(const Json& edits, const std::string& path)
{
  if (!edits.is_array()) throw CaseError(path, "expected an array of [from, to] pairs");
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < edits.size(); ++i) {
    if (!edits[i].is_array() || edits[i].size() != 2 || !edits[i][0].is_string() || !edits[i][1].is_string())
      throw CaseError(path + "/" + std::to_string(i), "expected [from, to], two strings");
    out.emplace_back(edits[i][0].get<std::string>(), edits[i][1].get<std::string>());
  }
  return out;
}

// A file's source and edits (cases/README.md, "Files"). A row's file of the case's name that gives
// no source edits the case's file.
CaseFile read_file(const Json& j, const std::string& path, const std::string& name, const std::vector<CaseFile>& base)
{
  if (j.is_string()) return CaseFile{name, j.get<std::string>()};
  Fields f(j, path);
  CaseFile file;
  file.name = name;
  if (f.has("lines")) file.text = join(f.lines("lines"));
  file.copy = f.string("copy", "");
  if (file.text && !file.copy.empty()) throw CaseError(path, "give lines or copy, not both");
  if (!file.text && file.copy.empty()) {
    const auto found = std::find_if(base.begin(), base.end(), [&](const CaseFile& b) { return b.name == name; });
    if (found == base.end())
      throw CaseError(path, "expected the file's lines or a file to copy (the case has no file '" + name + "' to edit)");
    file = *found;
  }
  if (f.has("merge")) file.merge.push_back(f.get("merge").dump());
  if (f.has("replace"))
    for (auto& edit : read_replacements(f.get("replace"), f.at("replace"))) file.replace.push_back(std::move(edit));
  if (f.has("truncate")) {
    const Json& n = f.get("truncate");
    if (!n.is_number_integer() || n.get<long>() < 0) throw CaseError(f.at("truncate"), "expected a byte count");
    file.truncate = n.get<long>();
  }
  file.latin1 = f.boolean("latin1", file.latin1);
  f.done();
  return file;
}

std::vector<CaseFile> read_files(Fields& f, const std::vector<CaseFile>& base)
{
  std::vector<CaseFile> files = base;
  if (!f.has("files")) return files;
  const Json& j = f.get("files");
  if (!j.is_object()) throw CaseError(f.at("files"), "expected an object of file names");
  for (const auto& item : j.items()) {
    if (item.key().empty() || item.key().find('/') != std::string::npos)
      throw CaseError(f.at("files") + "/" + item.key(), "expected a plain file name");
    CaseFile file = read_file(item.value(), f.at("files") + "/" + item.key(), item.key(), base);
    const auto same = std::find_if(files.begin(), files.end(), [&](const CaseFile& b) { return b.name == file.name; });
    if (same != files.end()) *same = std::move(file);
    else files.push_back(std::move(file));
  }
  return files;
}

const std::vector<std::string> kRequirements = {"torch", "no_torch", "no_gpu"};

// "environment": {"NAME": "value"} to set, null to unset.
Environment read_environment(Fields& f)
{
  Environment out;
  if (!f.has("environment")) return out;
  const Json& env = f.get("environment");
  if (!env.is_object()) throw CaseError(f.at("environment"), "expected an object of variable names");
  for (const auto& item : env.items()) {
    if (item.value().is_null()) out.emplace_back(item.key(), std::nullopt);
    else if (item.value().is_string()) out.emplace_back(item.key(), item.value().get<std::string>());
    else throw CaseError(f.at("environment") + "/" + item.key(), "expected a string, or null to unset it");
  }
  return out;
}

// An error row pins the message, not a fragment of it (a lone "Ne2", a JSON pointer alone): its
// parts together hold at least this many words besides file paths and JSON pointers.
constexpr int kRowWords = 4;

// The words of a row's expected parts that are not paths or pointers (a token with '/' or a
// placeholder); a part with alternatives counts as its shortest.
int message_words(const std::vector<std::vector<std::string>>& expected)
{
  int total = 0;
  for (const auto& alternatives : expected) {
    int fewest = -1;
    for (const std::string& part : alternatives) {
      std::istringstream in(part);
      int words = 0;
      for (std::string token; in >> token;) words += token.find('/') == std::string::npos && token.rfind("${", 0) != 0;
      fewest = fewest < 0 ? words : std::min(fewest, words);
    }
    total += std::max(fewest, 0);
  }
  return total;
}

ErrorRow read_error(const Json& j, const std::string& path, const Case& c)
{
  Fields f(j, path);
  ErrorRow e;
  e.name = f.string("name", "");
  if (e.name.empty()) throw CaseError(f.at("name"), "expected a name (letters, digits, _)");
  e.deck = f.has("deck") ? f.lines("deck") : c.deck;
  if (f.has("deck_replace")) {
    std::string text = join(e.deck);
    for (const auto& [from, to] : read_replacements(f.get("deck_replace"), f.at("deck_replace")))
      text = replaced(text, from, to, f.at("deck_replace"));
    e.deck = split_lines(text);
  }
  for (const std::string& line : f.lines("deck_append")) e.deck.push_back(line);
  e.pair = f.has("pair") ? f.lines("pair") : c.pair;
  e.md = f.lines("md");
  e.files = read_files(f, c.files);
  e.style = f.choice("style", kStyles, "plain");
  if (f.has("expected")) {
    const Json& parts = f.get("expected");
    if (!parts.is_array()) throw CaseError(f.at("expected"), "expected an array of parts of the message");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::string at = f.at("expected") + "/" + std::to_string(i);
      std::vector<std::string> alternatives;
      if (parts[i].is_string()) alternatives.push_back(parts[i].get<std::string>());
      else if (parts[i].is_array())
        for (const Json& a : parts[i])
          if (a.is_string()) alternatives.push_back(a.get<std::string>());
          else throw CaseError(at, "expected a string, or an array of alternative strings");
      if (alternatives.empty() || std::any_of(alternatives.begin(), alternatives.end(), [](const std::string& a) { return a.empty(); }))
        throw CaseError(at, "expected a part of the message (not empty), or an array of alternatives");
      e.expected.push_back(std::move(alternatives));
    }
  }
  if (e.expected.empty()) throw CaseError(f.at("expected"), "expected the parts of the error message, at least one");
  if (const int words = message_words(e.expected); words < kRowWords)
    throw CaseError(f.at("expected"), "expects " + std::to_string(words) + " word(s) of the message besides paths and JSON "
                    "pointers, a fragment that a wrong message can hold too; expected at least " + std::to_string(kRowWords) +
                    ": the file or key named, what was expected there, and the hint (the message as the row's input gets it)");
  e.ranks = read_ranks(f);
  if (f.has("requires")) e.requirements = f.choices("requires", kRequirements, {});
  e.environment = read_environment(f);
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
  c.check = f.choice("check", {"observables", "nve_drift", "masses", "errors"}, "observables");
  c.deck = f.lines("deck");
  if (c.deck.empty()) throw CaseError("/deck", "expected the deck's lines (box and atoms)");
  c.pair = f.lines("pair");
  if (c.pair.empty()) throw CaseError("/pair", "expected the pair lines under test");
  c.md = f.lines("md");
  c.observe_after_md = f.choice("observe", {"run_0", "after_md"}, "run_0") == "after_md";
  if (c.observe_after_md && c.md.empty())
    throw CaseError("/observe", "after_md reads what the md lines' last run left: give the md lines");
  c.files = read_files(f, {});
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
  if (f.has("zero")) {
    const Json& zero = f.get("zero");
    if (!zero.is_object()) throw CaseError("/zero", "expected an object {observable: why it is zero}");
    const std::vector<std::string> observables = {"pe", "forces", "virial", "energy_atom", "virial_atom"};
    for (const auto& item : zero.items()) {
      if (std::find(observables.begin(), observables.end(), item.key()) == observables.end())
        throw CaseError("/zero/" + item.key(), "'" + item.key() + "' is not one of " + Fields::listed(observables));
      if (!item.value().is_string() || item.value().get<std::string>().empty())
        throw CaseError("/zero/" + item.key(), "expected the reason this observable is zero (a string)");
      c.zero[item.key()] = item.value().get<std::string>();
    }
  }
  c.environment = read_environment(f);
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
  if (c.check == "errors") {
    // The deck and pair lines are the valid input the rows alter: it runs, and is compared with
    // nothing, so that a row fails only for its own reason.
    if (!c.references.empty()) throw CaseError("/references", "a case whose check is errors has no references");
    if (c.variants.size() != 1 || !c.variants.front().is_default())
      throw CaseError("/variants", "a case whose check is errors runs its deck in the default variant only");
  } else if (c.check != "nve_drift" && c.references.empty()) {
    throw CaseError("/references", "expected at least one reference for check " + c.check);
  }

  if (f.has("errors")) {
    const Json& rows = f.get("errors");
    if (!rows.is_array()) throw CaseError("/errors", "expected an array of error rows");
    std::set<std::string> names;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      c.errors.push_back(read_error(rows[i], "/errors/" + std::to_string(i), c));
      if (!names.insert(c.errors.back().name).second)
        throw CaseError("/errors/" + std::to_string(i) + "/name", "'" + c.errors.back().name + "' names another row too");
    }
  }
  if (c.check == "errors" && c.errors.empty()) throw CaseError("/errors", "a case whose check is errors needs its rows");
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
                                                       {"${rank}", std::to_string(world_rank())},
                                                       {"${tmp}", tmp},
                                                       {"${dir}", rank_folder(tmp)}};
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

namespace {

std::string run_folder_of(const std::string& tmp) { return tmp.substr(0, tmp.rfind('/')); }

std::string read_bytes(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " (a case file's copy)");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// UTF-8 text whose code points are all below U+0100, one byte each.
std::string as_latin1(const std::string& utf8, const std::string& name)
{
  std::string out;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto b = static_cast<unsigned char>(utf8[i]);
    if (b < 0x80) {
      out += static_cast<char>(b);
    } else if ((b == 0xC2 || b == 0xC3) && i + 1 < utf8.size()) {
      out += static_cast<char>(((b & 0x03) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3F));
    } else {
      throw std::runtime_error(name + ": latin1 text holds a code point above U+00FF");
    }
  }
  return out;
}

}  // namespace

std::string rank_folder(const std::string& tmp) { return run_folder_of(tmp) + "/rank" + std::to_string(world_rank()); }

void write_files(const std::vector<CaseFile>& files, const std::string& tmp)
{
  const std::string folder = rank_folder(tmp);
  std::filesystem::create_directories(folder);
  for (const CaseFile& file : files) {
    std::string text = file.text ? *file.text : read_bytes(expand(file.copy, tmp));
    for (const std::string& patch : file.merge) {
      Json j = Json::parse(text);
      j.merge_patch(Json::parse(expand(patch, tmp)));
      text = j.dump(1);
    }
    for (const auto& [from, to] : file.replace) {
      const auto at = text.find(from);
      if (at == std::string::npos) throw std::runtime_error(file.name + ": '" + from + "' is not in the file it edits");
      text.replace(at, from.size(), to);
    }
    if (file.truncate >= 0) text.resize(std::min(text.size(), static_cast<std::size_t>(file.truncate)));
    text = expand(text, tmp);
    if (file.latin1) text = as_latin1(text, file.name);
    std::ofstream(folder + "/" + file.name, std::ios::binary) << text;
  }
}

std::string with_own_folder(std::string message, const std::string& tmp)
{
  const std::string stem = run_folder_of(tmp) + "/rank", own = rank_folder(tmp);
  for (int r = world_size() - 1; r >= 0; --r) {
    const std::string other = stem + std::to_string(r);
    if (other == own) continue;
    for (auto at = message.find(other); at != std::string::npos; at = message.find(other, at + own.size()))
      message.replace(at, other.size(), own);
  }
  return message;
}

}  // namespace distspec::testing
