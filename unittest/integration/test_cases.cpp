// The integration cases: every data file in unittest/integration/cases (its format in
// cases/README.md) run on the current rank count, each variant on every processor grid, against
// each of the case's references: LAMMPS' own pair styles, the case's own lines in the plain
// style, one rank, or the model evaluated outside LAMMPS on the unwrapped periodic system.
// Cases whose check is nve_drift or masses, and every case's error rows, run here too.
#include <gtest/gtest.h>

#include "library.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <mpi.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "case_file.h"
#include "gpu_availability.h"
#include "lammps_session.h"
#include "periodic_images_reference.h"
#include "reference_comparison.h"
#include "remove_tree.h"
#include "watchdog.h"

namespace dt = distspec::testing;

namespace {

// The folder this program's cases are in (the build passes it: unittest/integration/cases, or
// the torch kind's unittest/torch/cases).
std::string cases_folder() { return DISTSPEC_CASES_DIR; }

using Json = nlohmann::json;

// A reference another program wrote: {"tags", "energy", "forces", "atomic_energies", "virial"
// (energy units, xx yy zz xy xz yz)[, "virial_atom" (per atom, the same units and order)]},
// atoms in any order. Put in the run's order (by atom ID) and the run's units: the per-atom
// virial as `compute stress/atom NULL virial` gives it (-nktv2p x the virial).
dt::Observables read_reference_file(const std::string& path, const dt::Observables& run)
{
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the reference " + path);
  const Json ref = Json::parse(in);
  std::map<long, std::size_t> row_of_tag;
  for (std::size_t k = 0; k < ref.at("tags").size(); ++k) row_of_tag[ref["tags"][k].get<long>()] = k;
  dt::Observables o;
  o.pe = ref.at("energy").get<double>();
  for (double id : run.ids) {
    const auto found = row_of_tag.find(std::lround(id));
    if (found == row_of_tag.end()) throw std::runtime_error(path + " has no atom " + std::to_string(std::lround(id)));
    for (int c = 0; c < 3; ++c) o.forces.push_back(ref["forces"][found->second][c].get<double>());
    o.energy_atom.push_back(ref["atomic_energies"][found->second].get<double>());
    if (ref.contains("virial_atom"))
      for (int c = 0; c < 6; ++c) o.virial_atom.push_back(-run.nktv2p * ref["virial_atom"][found->second][c].get<double>());
  }
  const auto& b = run.box;
  const double volume = (b[3] - b[0]) * (b[4] - b[1]) * (b[5] - b[2]);
  for (double v : ref.at("virial").get<std::vector<double>>()) o.virial.push_back(v / volume * run.nktv2p);
  return o;
}

// The folder of one test's files (data and restart files, logs): unique per run (rank 0's pid),
// so concurrent runs never share it, and removed when the test ends. `${tmp}` is a prefix in it.
class RunFolder {
 public:
  explicit RunFolder(const std::string& run)
  {
    long pid = static_cast<long>(getpid());
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    path_ = "/tmp/distspec_case_" + std::to_string(pid) + "_" + run;
    if (dt::world_rank() == 0) std::filesystem::create_directories(path_);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~RunFolder()
  {
    MPI_Barrier(MPI_COMM_WORLD);
    if (dt::world_rank() == 0) distspec::testing::remove_tree(path_);
  }
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  std::string prefix() const { return path_ + "/run"; }

 private:
  std::string path_;
};

bool runs_on_this_rank_count(const dt::Case& c)
{
  return c.ranks.empty() || std::find(c.ranks.begin(), c.ranks.end(), dt::world_size()) != c.ranks.end();
}

std::string first_word(const std::string& line)
{
  std::istringstream in(line);
  std::string w;
  in >> w;
  return w;
}

// The pair lines in a style: keywords after the word `distspec` of the pair_style line (plain or
// a hybrid's sub-style), or the style renamed.
std::string styled_pair(const std::vector<std::string>& pair, const dt::Variant& v, const std::string& tmp)
{
  std::string keywords;
  if (v.style == "threads") keywords += " threads 2";
  if (!v.halo.empty()) keywords += " halo " + v.halo;
  // All ranks of a node share its GPUs (on one GPU, every rank runs on it).
  if (v.device == "cuda") keywords += " device cuda gpu_share yes";
  std::string text;
  for (std::string line : pair) {
    line = dt::expand(line, tmp);
    if (first_word(line) == "pair_style") {
      const auto at = line.find(" distspec");
      if (at == std::string::npos) ADD_FAILURE() << "no 'distspec' in the pair_style line '" << line << "'";
      else if (v.style == "kk_host") line.insert(at + 9, "/kk/host" + keywords);
      else line.insert(at + 9, keywords);
    }
    text += line + "\n";
  }
  return text;
}

// LAMMPS' command-line arguments of a style: KOKKOS on 2 threads or on one GPU, with its package
// settings matched to newton (what recent KOKKOS requires with newton on) for kk_package and
// kk_gpu.
std::vector<std::string> style_args(const dt::Variant& v)
{
  if (!v.is_kokkos()) return {};
  std::vector<std::string> args{"-k", "on"};
  if (v.style == "kk_gpu") args.insert(args.end(), {"g", "1"});
  else args.insert(args.end(), {"t", "2"});
  args.insert(args.end(), {"-sf", "kk"});  // kk_host names its style; -sf kk also picks verlet/kk
  if (v.style == "kk_package" || v.style == "kk_gpu")
    args.insert(args.end(), {"-pk", "kokkos", "newton", v.newton, "neigh", v.newton == "on" ? "half" : "full"});
  return args;
}

// Why a variant cannot run here, or "": LAMMPS without KOKKOS, `device cuda` without a GPU or a
// plugin without CUDA, distspec/kk on a GPU without a KOKKOS built for CUDA. Probed once each.
std::string unavailable(const dt::Variant& v)
{
#ifndef DISTSPEC_LAMMPS_HAS_KOKKOS
  if (v.is_kokkos()) return "LAMMPS without KOKKOS";
#endif
  if (v.device == "cuda" && !dt::device_cuda_unavailable().empty()) return dt::device_cuda_unavailable();
  if (v.style == "kk_gpu" && !dt::gpu_kokkos_unavailable().empty()) return dt::gpu_kokkos_unavailable();
  return "";
}

std::string lines_of(const std::vector<std::string>& lines, const std::string& tmp)
{
  std::string text;
  for (const std::string& l : lines) text += dt::expand(l, tmp) + "\n";
  return text;
}

// The deck as the variant's input makes it. read_data and restart first run the deck once (on
// the same grid) and write the file the run then reads; read_data keeps the deck's lines before
// its box (units, atom_style, boundary, ...).
std::string deck_for(const dt::Case& c, const dt::Variant& v, const std::string& head, const std::string& tmp)
{
  const std::string deck = lines_of(c.deck, tmp);
  if (v.input == "create_atoms") return deck;
  const std::string file = tmp + (v.input == "restart" ? ".restart" : ".data");
  {
    dt::LammpsSession lmp;
    lmp.run("plugin load " + dt::plugin_path() + "\n" + head + deck +
            (v.input == "restart" ? "write_restart " + file : "write_data " + file + " nocoeff"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (v.input == "restart") return "read_restart " + file + "\n";
  std::string preamble;
  for (const std::string& line : c.deck) {
    const std::string w = first_word(line);
    if (w == "create_box" || w == "read_data") break;
    preamble += dt::expand(line, tmp) + "\n";
  }
  return preamble + "read_data " + file + "\n";
}

std::string head_of(const std::string& grid, const dt::Variant& v)
{
  return (grid.empty() ? "" : "processors " + grid + "\n") + "newton " + v.newton + "\n";
}

// `log FILE` lines for the runs whose logs a case compares.
std::string log_line(const dt::Case& c, const std::string& file) { return c.log_lines.empty() ? "" : "log " + file + "\n"; }

// The lines of a log that start with one of `prefixes`, in order.
std::vector<std::string> logged(const std::string& path, const std::vector<std::string>& prefixes)
{
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    for (const std::string& p : prefixes)
      if (line.rfind(p, 0) == 0) out.push_back(line);
  return out;
}

// Each observable with a bound (a null bound is infinite: not compared) within it; one the
// reference did not compute (NaN) fails, as a bound that could never fail; so does a non-finite
// value anywhere in the run or the reference, and an observable exactly zero in both that the
// case does not say is zero. Returns how many observables were compared.
int expect_within(const dt::Deviation& d, const dt::Tolerance& t, const dt::Case& c)
{
  for (const std::string& where : d.nonfinite) ADD_FAILURE() << where << ": " << dt::describe(d);
  int compared = 0;
  const std::pair<const char*, std::pair<double, double>> rows[] = {
      {"pe", {d.pe, t.pe}}, {"forces", {d.forces, t.forces}}, {"virial", {d.virial, t.virial}},
      {"energy_atom", {d.energy_atom, t.energy_atom}}, {"virial_atom", {d.virial_atom, t.virial_atom}},
      {"positions", {d.positions, t.positions}}};
  for (const auto& [name, dev_bound] : rows) {
    const auto [dev, bound] = dev_bound;
    if (std::isinf(bound)) continue;
    if (std::isnan(dev)) ADD_FAILURE() << "the reference computes no " << name << ", but its tolerance is " << bound
                                       << ": make it null in the case file";
    else EXPECT_LE(dev, bound) << name << ": " << dt::describe(d);
    compared += !std::isnan(dev);
    const bool zero = std::find(d.both_zero.begin(), d.both_zero.end(), name) != d.both_zero.end();
    if (zero && !c.zero.count(name))
      ADD_FAILURE() << name << " is exactly zero in both the run and the reference, a comparison that cannot fail: make the "
                    << "case compute a nonzero " << name << ", or, if it must be zero, say why in the case's \"zero\": {\""
                    << name << "\": \"...\"} (cases/README.md)";
  }
  return compared;
}

// Whether a reference is compared in this variant on this many ranks (the one-rank reference on
// one rank and the default variant against itself are the run itself).
// Whether this LAMMPS has the style a reference needs ("pair dispersion/d3").
bool style_available(const std::string& required)
{
  if (required.empty()) return true;
  static std::map<std::string, bool> known;
  if (const auto it = known.find(required); it != known.end()) return it->second;
  const std::size_t space = required.find(' ');
  dt::LammpsSession lmp;
  const bool has = lammps_has_style(lmp.handle(), required.substr(0, space).c_str(), required.substr(space + 1).c_str()) != 0;
  return known[required] = has;
}

bool compared(const dt::Reference& ref, const dt::Variant& v)
{
  if (!style_available(ref.requires_style)) return false;
  if (ref.kind == dt::Reference::Kind::one_rank) return dt::world_size() > 1;
  if (ref.kind == dt::Reference::Kind::default_variant) return !v.is_default();
  return true;
}

class Cases : public ::testing::TestWithParam<dt::CaseRun> {
 protected:
  void SetUp() override
  {
    if (!GetParam().problem.empty()) FAIL() << GetParam().problem;
    const std::string why = unavailable(GetParam().variant);
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

// Whether the run's atoms move before they are observed: md lines (the case's, or a reference's
// own). Only then are positions a comparison; after `run 0` they are the input against itself.
bool moves_atoms(const dt::Case& c, const dt::Reference& ref) { return !c.md.empty() || (ref.md && !ref.md->empty()); }

// Every reference of the case, on every processor grid of this rank count. Returns how many
// (grid, reference) pairs compared at least one observable.
int check_observables(const dt::Case& c, const dt::Variant& v, const std::string& tmp)
{
  int comparisons = 0;
  const dt::Variant plain{v.newton};
  for (const std::string& grid : dt::processor_grids()) {
    SCOPED_TRACE("processors " + grid);
    const std::string head = head_of(grid, v);
    // md lines observed where they end (observe after_md), or followed by a `run 0`.
    const std::string md = lines_of(c.md, tmp);
    const std::string observed = c.observe_after_md ? md : "";
    auto with_md = [&](const std::string& pair_lines, const std::string& own_md) {
      return c.observe_after_md ? pair_lines : pair_lines + own_md;
    };
    const std::string pair = with_md(styled_pair(c.pair, v, tmp), md);
    const std::string setup = head + deck_for(c, v, head, tmp);
    const dt::Observables got = dt::evaluate(log_line(c, tmp + ".log") + setup, pair, style_args(v), observed);
    // Whatever the partition of the virial among atoms, it sums to the virial: on every grid, at
    // the loosest per-atom virial bound the case compares with (none: not checked).
    double sum_rule_bound = -1.0;
    for (const dt::Reference& ref : c.references)
      if (std::isfinite(ref.tolerance.virial_atom)) sum_rule_bound = std::max(sum_rule_bound, ref.tolerance.virial_atom);
    if (sum_rule_bound >= 0.0) {
      const double sum_rule = dt::virial_sum_rule(got);
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", sum_rule);
      ::testing::Test::RecordProperty(grid + " per-atom virial sum vs virial", text);
      EXPECT_LE(sum_rule, sum_rule_bound) << "the per-atom virial does not sum to the virial";
    }
    for (std::size_t r = 0; r < c.references.size(); ++r) {
      const dt::Reference& ref = c.references[r];
      SCOPED_TRACE("against " + ref.name);
      if (!style_available(ref.requires_style)) {
        ::testing::Test::RecordProperty(grid + " vs " + ref.name, "skipped: this LAMMPS has no " + ref.requires_style);
        continue;
      }
      dt::Observables want;
      const std::string ref_log = tmp + ".reference" + std::to_string(r) + ".log";
      switch (ref.kind) {
        case dt::Reference::Kind::pair_lines: {
          const std::string ref_md = ref.md ? lines_of(*ref.md, tmp) : md;
          want = dt::evaluate(log_line(c, ref_log) + head + lines_of(c.deck, tmp), with_md(lines_of(ref.pair, tmp), ref_md),
                              ref.same_args ? style_args(v) : ref.args, c.observe_after_md ? ref_md : "");
          break;
        }
        case dt::Reference::Kind::default_variant:
          if (!compared(ref, v)) continue;
          want = dt::evaluate(log_line(c, ref_log) + head + lines_of(c.deck, tmp), with_md(styled_pair(c.pair, plain, tmp), md), {},
                              observed);
          break;
        case dt::Reference::Kind::one_rank:
          if (!compared(ref, v)) continue;
          want = dt::evaluate_on_one_rank(log_line(c, ref_log) + head_of("", v) + deck_for(c, v, head_of("", v), tmp + "_one"),
                                          pair, style_args(v), observed);
          break;
        case dt::Reference::Kind::periodic_images:
          want = dt::evaluate_on_periodic_images(styled_pair(c.pair, v, tmp), got);
          break;
        case dt::Reference::Kind::reference_file:
          want = read_reference_file(dt::expand(ref.file, tmp), got);
          break;
      }
      dt::Deviation d = dt::compare(got, want, ref.tolerance.absolute_per_atom);
      dt::Tolerance bound = ref.tolerance;
      if (!moves_atoms(c, ref)) {
        d.positions = NAN;
        bound.positions = INFINITY;
      }
      ::testing::Test::RecordProperty(grid + " vs " + ref.name, dt::describe(d));
      comparisons += expect_within(d, bound, c) > 0;
      if (ref.must_differ) EXPECT_GT(d.worst(), 0.0) << "the run should differ from " << ref.name;
      const bool logs = ref.kind != dt::Reference::Kind::periodic_images && ref.kind != dt::Reference::Kind::reference_file;
      if (!c.log_lines.empty() && logs) {
        MPI_Barrier(MPI_COMM_WORLD);  // rank 0 has closed both logs; only it writes one
        if (dt::world_rank() == 0) {
          const auto mine = logged(tmp + ".log", c.log_lines), theirs = logged(ref_log, c.log_lines);
          if (c.log_line_count) EXPECT_EQ(theirs.size(), c.log_line_count) << dt::join(theirs);
          EXPECT_EQ(dt::join(mine), dt::join(theirs));
        }
      }
    }
  }
  return comparisons;
}

// Energy per atom after the steps minus before, from 300 K.
void check_nve_drift(const dt::Case& c, const dt::Variant& v, const std::string& tmp)
{
  const std::string setup = head_of("", v) + lines_of(c.deck, tmp);
  const double ours = dt::nve_drift_per_atom(setup, styled_pair(c.pair, v, tmp), c.steps, c.timestep);
  if (c.max_drift_per_atom > 0.0) {
    EXPECT_LT(std::abs(ours), c.max_drift_per_atom) << "drift " << ours << " per atom";
    return;
  }
  const double native = dt::nve_drift_per_atom(setup, lines_of(c.reference_pair, tmp), c.steps, c.timestep);
  ::testing::Test::RecordProperty("drift", std::to_string(ours) + " vs reference " + std::to_string(native));
  EXPECT_LE(std::abs(ours), std::abs(native) * c.factor + c.slack) << "reference " << native << ", distspec " << ours;
}

// pair_coeff sets the masses of the types it maps as the reference style does: from a deck whose
// masses are all 1, both leave the same per-atom masses, and a `mass` command after pair_coeff
// still wins.
int check_masses(const dt::Case& c, const dt::Variant& v, const std::string& tmp)
{
  auto masses = [&](const std::string& pair, const std::string& after) {
    dt::LammpsSession lmp;
    lmp.run("plugin load " + dt::plugin_path() + "\n" + head_of("", v) + lines_of(c.deck, tmp) + "mass * 1.0\n" + pair +
            after + "compute m all property/atom mass\nrun 0 post no\n");
    return lmp.gather("c_m", 1);
  };
  const std::string ours = styled_pair(c.pair, v, tmp);
  for (const dt::Reference& ref : c.references) {
    SCOPED_TRACE("against " + ref.name);
    const std::vector<double> want = masses(lines_of(ref.pair, tmp), "");
    EXPECT_EQ(masses(ours, ""), want);
    EXPECT_NE(std::count(want.begin(), want.end(), 1.0), static_cast<long>(want.size())) << "the reference kept mass 1";
  }
  const std::vector<double> overridden = masses(ours, "mass * 2.0\n");
  EXPECT_FALSE(overridden.empty()) << "no atoms";
  for (double m : overridden) EXPECT_EQ(m, 2.0);
  return static_cast<int>(c.references.size());
}

// The valid input an errors case's rows alter runs cleanly, or a row could fail for a reason other
// than its own.
void check_runs(const dt::Case& c, const std::string& tmp)
{
  dt::LammpsSession lmp;
  const std::string error = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + lines_of(c.deck, tmp) +
                                                    lines_of(c.pair, tmp) + "run 0 post no");
  EXPECT_EQ(dt::with_own_folder(error, tmp), "") << "the input the rows of " << c.file << " alter does not run";
}

// Sets a case's or a row's environment for the life of its runs, and restores what was there.
class ScopedEnvironment {
 public:
  // Values take the placeholders of case lines (${potentials}, ${dir}, ...).
  ScopedEnvironment(const dt::Environment& vars, const std::string& tmp)
  {
    for (const auto& [name, value] : vars) {
      const char* was = std::getenv(name.c_str());
      saved_.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
      set(name, value ? std::optional<std::string>(dt::expand(*value, tmp)) : std::nullopt);
    }
  }
  ~ScopedEnvironment()
  {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) set(it->first, it->second);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  static void set(const std::string& name, const std::optional<std::string>& value)
  {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
  dt::Environment saved_;
};

TEST_P(Cases, AgreeWithTheirReferences)
{
  const dt::Case& c = *GetParam().c;
  // Runs whose references are all the run itself are not instantiated (runs_here); what is left
  // to skip is a LAMMPS without the style every reference needs.
  if (c.check == "observables" && std::none_of(c.references.begin(), c.references.end(),
                                      [&](const dt::Reference& r) { return compared(r, GetParam().variant); })) {
    std::string lacking;
    for (const dt::Reference& r : c.references)
      if (!style_available(r.requires_style)) lacking = r.requires_style;
    if (lacking.empty()) FAIL() << "nothing to compare on " << dt::world_size() << " rank(s): " << c.file;
    // The reason names no file: the test's name says the case, and reasons are counted alike.
    GTEST_SKIP() << "this LAMMPS has no " << lacking << ", which every reference of the case needs";
  }
  const RunFolder folder(GetParam().name);
  const std::string tmp = folder.prefix();
  dt::write_files(c.files, tmp);
  MPI_Barrier(MPI_COMM_WORLD);
  if (dt::world_rank() == 0 && !c.description.empty()) RecordProperty("description", c.description);
  const ScopedEnvironment environment(c.environment, tmp);
  // A test that compared nothing fails: a loop over references and grids that ran empty hides
  // whatever it was meant to catch.
  int comparisons = 1;  // nve_drift: the drift; errors: the valid input runs
  if (c.check == "nve_drift") check_nve_drift(c, GetParam().variant, tmp);
  else if (c.check == "masses") comparisons = check_masses(c, GetParam().variant, tmp);
  else if (c.check == "errors") check_runs(c, tmp);
  else comparisons = check_observables(c, GetParam().variant, tmp);
  RecordProperty("comparisons", comparisons);
  EXPECT_GT(comparisons, 0) << c.file << " compared no observable with any reference here";
}

// Whether a reference is the run itself on this many ranks, in this variant.
bool is_the_run_itself(const dt::Reference& ref, const dt::Variant& v)
{
  return (ref.kind == dt::Reference::Kind::one_rank && dt::world_size() == 1) ||
         (ref.kind == dt::Reference::Kind::default_variant && v.is_default());
}

// The runs of this rank count: a case (or a row) not meant for it, and an observables case whose
// references are all the run itself here (one_rank on one rank, default_variant in the default
// variant), have no test, rather than a skip that ctest would count as a pass. A file that could
// not be read stays, and fails.
std::vector<dt::CaseRun> runs_here(const std::vector<dt::CaseRun>& runs)
{
  std::vector<dt::CaseRun> out;
  for (const dt::CaseRun& run : runs) {
    if (run.c && !runs_on_this_rank_count(*run.c)) continue;
    if (run.c && run.c->check == "observables" &&
        std::all_of(run.c->references.begin(), run.c->references.end(),
                    [&](const dt::Reference& r) { return is_the_run_itself(r, run.variant); }))
      continue;
    out.push_back(run);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Data, Cases, ::testing::ValuesIn(runs_here(dt::case_runs(cases_folder()))),
                         [](const ::testing::TestParamInfo<dt::CaseRun>& info) { return info.param.name; });

// Why a row's requirement is not met here, or "".
std::string unmet(const std::string& requirement)
{
#ifdef DISTSPEC_WITH_TORCH
  const bool torch = true;
#else
  const bool torch = false;
#endif
  if (requirement == "torch" && !torch) return "needs a plugin built with the torch kind";
  if (requirement == "no_torch" && torch) return "the plugin has the torch kind";
  if (requirement == "no_gpu" && dt::device_cuda_unavailable().empty()) return "device cuda runs here";
  return "";
}

class CaseErrors : public Cases {
 protected:
  void SetUp() override
  {
    const dt::ErrorRow& row = GetParam().c->errors[static_cast<std::size_t>(GetParam().error)];
    for (const std::string& requirement : row.requirements)
      if (const std::string why = unmet(requirement); !why.empty()) GTEST_SKIP() << why;
  }
};

// The rows of this rank count and this build: a row for other rank counts, or for a plugin
// with(out) the torch kind (a fact of the build, not of the machine), has no test here.
std::vector<dt::CaseRun> rows_here(const std::vector<dt::CaseRun>& rows)
{
  std::vector<dt::CaseRun> out;
  for (const dt::CaseRun& run : rows) {
    const dt::ErrorRow& row = run.c->errors[static_cast<std::size_t>(run.error)];
    const std::vector<int>& ranks = row.ranks.empty() ? run.c->ranks : row.ranks;
    if (!ranks.empty() && std::find(ranks.begin(), ranks.end(), dt::world_size()) == ranks.end()) continue;
    if (std::any_of(row.requirements.begin(), row.requirements.end(), [](const std::string& r) {
          return r != "no_gpu" && !unmet(r).empty();
        }))
      continue;
    out.push_back(run);
  }
  return out;
}

// A row that leaves a rank waiting in a collective fails, rather than hanging the suite.
constexpr std::chrono::seconds kRowLimit{120};

// Every rank stops with the row's message: each part of it on every rank.
TEST_P(CaseErrors, StopEveryRankWithTheirMessage)
{
  const dt::ErrorRow& row = GetParam().c->errors[static_cast<std::size_t>(GetParam().error)];
  dt::Variant v;
  v.style = row.style;
  const std::string why = unavailable(v);
  if (!why.empty()) GTEST_SKIP() << why;
  const RunFolder folder(GetParam().name);
  const std::string tmp = folder.prefix();
  dt::write_files(row.files, tmp);
  MPI_Barrier(MPI_COMM_WORLD);
  std::string error;
  {
    const ScopedEnvironment environment(row.environment, tmp);
    const dt::Watchdog watchdog("error row " + GetParam().name, kRowLimit);
    dt::LammpsSession lmp(style_args(v));
    error = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + lines_of(row.deck, tmp) +
                                    styled_pair(row.pair, v, tmp) + (row.md.empty() ? "run 0 post no\n" : lines_of(row.md, tmp)));
  }
  error = dt::with_own_folder(error, tmp);
  int here = !error.empty();
  EXPECT_FALSE(error.empty()) << "rank " << dt::world_rank() << ": no error, the input ran";
  for (const std::vector<std::string>& alternatives : row.expected) {
    const bool found = std::any_of(alternatives.begin(), alternatives.end(), [&](const std::string& part) {
      return error.find(dt::expand(part, tmp)) != std::string::npos;
    });
    here = here && found;
    EXPECT_TRUE(found) << "rank " << dt::world_rank() << " expected a message containing "
                       << (alternatives.size() > 1 ? "one of\n  " : "\n  ") << dt::expand(dt::join(alternatives), tmp)
                       << "got\n  " << error;
  }
  int everywhere = here;
  MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_TRUE(everywhere) << "not every rank stopped with the message";
}

INSTANTIATE_TEST_SUITE_P(Data, CaseErrors, ::testing::ValuesIn(rows_here(dt::error_runs(cases_folder()))),
                         [](const ::testing::TestParamInfo<dt::CaseRun>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CaseErrors);

}  // namespace
