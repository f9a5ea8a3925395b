// An integration case as a data file (unittest/integration/cases/*.json; the format is in
// cases/README.md): the deck, the pair lines, the references they must reproduce, the rank
// counts, the variants and the tolerances. The driver (test_cases.cpp) runs every variant of
// every case against each of its references.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace distspec::testing {

// Largest allowed deviation of each observable (reference_comparison.h: relative to the
// reference's largest magnitude; pe relative to the reference's pe); infinity: not compared.
struct Tolerance {
  double pe = 1e-10, forces = 1e-10, virial = 1e-10, energy_atom = 1e-10, virial_atom = 1e-10, positions = 1e-10;
  bool absolute_per_atom = false;  // forces and per-atom energies as plain differences (eV/A, eV)
};

// What a variant's run is compared with.
struct Reference {
  enum class Kind {
    pair_lines,       // the same deck with other pair lines (LAMMPS' own style, another model file)
    default_variant,  // the case's own pair lines in the default variant (plain style, spec's halo,
                      // create_atoms), same newton and processor grid
    one_rank,         // the variant itself on one rank, broadcast (runs with more than one rank only)
    periodic_images,  // the model file evaluated outside LAMMPS on the periodic system unwrapped
                      // into images (the expanded strategy on one process, no exchange at all)
    reference_file,   // outputs another program wrote (the eager PyTorch model, a calculator), by atom ID
  };
  Kind kind = Kind::pair_lines;
  std::string name;               // in failure messages: "lj/cut", "plain style", ...
  std::vector<std::string> pair;  // pair_lines
  // pair_lines: its own md lines instead of the case's (the MD run whose frames a rerun reads)
  std::optional<std::vector<std::string>> md;
  std::vector<std::string> args;  // pair_lines: LAMMPS command-line arguments of the reference run
  bool same_args = false;         // pair_lines: the variant's arguments instead (LAMMPS' own /kk style)
  std::string file;               // reference_file
  Tolerance tolerance;
  bool must_differ = false;       // the deviation must also be above zero (another arithmetic really ran)
  // pair_lines: "pair dispersion/d3", a LAMMPS style the reference needs; a LAMMPS without it
  // skips this reference (visibly, in the test's report) and keeps the others.
  std::string requires_style;
};

// How the case's own run is made; each case lists the values it sweeps.
struct Variant {
  std::string newton = "on";          // on, off
  std::string style = "plain";        // plain, threads, kk, kk_package, kk_host, kk_gpu
  std::string halo;                   // "", per_layer, expanded
  std::string input = "create_atoms"; // create_atoms (the deck as written), read_data, restart
  std::string device = "cpu";         // cpu, cuda (`device cuda gpu_share yes`)

  std::string name() const;  // "newton_on_kk_expanded_restart": the values that are not the default
  bool is_kokkos() const { return style.rfind("kk", 0) == 0; }
  bool is_default() const { return style == "plain" && halo.empty() && input == "create_atoms" && device == "cpu"; }
};

// A file each rank writes into its own folder (`${dir}`) before a run: a model file, a spec, a
// potential table, made from text or from another file, then edited (cases/README.md, "Files").
struct CaseFile {
  std::string name;
  std::optional<std::string> text;  // the contents, or
  std::string copy;                 // the file whose contents are taken (placeholders expanded)
  // The edits, in this order: JSON merge patches (JSON text), then replacements (each `from` must
  // occur), then the first `truncate` bytes; placeholders are expanded last.
  std::vector<std::string> merge;
  std::vector<std::pair<std::string, std::string>> replace;
  long truncate = -1;
  bool latin1 = false;  // code points U+0000..U+00FF written as single bytes (bytes JSON cannot hold)
};

// Environment variables to set, or (nullopt) to unset.
using Environment = std::vector<std::pair<std::string, std::optional<std::string>>>;

// An input the case's model must refuse, and the parts of the message every rank reports.
struct ErrorRow {
  std::string name;
  std::vector<std::string> deck;  // the case's deck after its edits
  std::vector<std::string> pair;
  std::vector<std::string> md;    // after the pair lines, in place of `run 0 post no`
  std::vector<CaseFile> files;    // the case's files after the row's edits
  std::string style = "plain";
  // Every part must be in the message; a part given as several alternatives needs one of them.
  std::vector<std::vector<std::string>> expected;
  std::vector<int> ranks;                 // rank counts it runs on; empty: the case's
  std::vector<std::string> requirements;  // torch, no_torch, no_gpu: skipped, with the reason, where unmet
  Environment environment;  // set (or, null, unset) for the run
};

struct Case {
  Environment environment;  // set (or, null, unset) for the run and its references
  std::string file;  // the data file, for messages
  std::string name;  // its base name
  std::string description;
  std::string check = "observables";  // observables, nve_drift, masses, errors (the deck runs; its rows do not)
  std::vector<std::string> deck;      // box and atoms
  std::vector<std::string> pair;      // the pair lines under test
  std::vector<std::string> md;        // after the pair lines, before the evaluation (MD, box changes)
  // The observables are those the md lines' last run left (a rerun's last frame), read without
  // the final `run 0`, which would rebuild every list and hide a stale one.
  bool observe_after_md = false;
  std::vector<CaseFile> files;        // written into each rank's folder before every run
  std::vector<int> ranks;             // rank counts it runs on; empty: every count
  std::vector<Variant> variants;      // the product of the listed values
  std::vector<Reference> references;
  // Observables the case says are exactly zero in the run and its references, each with the
  // reason ("virial_atom": "..."): only these may compare zero with zero, a comparison that could
  // not fail.
  std::map<std::string, std::string> zero;
  // observables: ewald.cpp-style lines a reference run logs, which the case's run must log alike.
  std::vector<std::string> log_lines;
  std::size_t log_line_count = 0;
  // nve_drift: |drift per atom| over `steps` below `max_drift_per_atom`, or below `factor` x the
  // drift with `reference_pair` plus `slack`.
  int steps = 0;
  double timestep = 0.0;
  double max_drift_per_atom = 0.0;
  std::vector<std::string> reference_pair;
  double factor = 1.05, slack = 1e-7;
  std::vector<ErrorRow> errors;
};

// One test: a case in one variant (or its error rows, or its check). `problem` is set instead
// when the case file could not be read; that test fails with it.
struct CaseRun {
  const Case* c = nullptr;
  Variant variant;
  std::string name;
  int error = -1;  // error_runs: the row of c->errors
  std::string problem;
};
inline void PrintTo(const CaseRun& r, std::ostream* os) { *os << r.name; }

// Every case under `folder`, each variant a run, in file order; a file that cannot be read
// becomes one run that fails with the file, the JSON path and what was expected.
const std::vector<CaseRun>& case_runs(const std::string& folder);
// Every case's error rows, a run each.
const std::vector<CaseRun>& error_runs(const std::string& folder);

// ${potentials}, ${cases} (the folder of the cases, DISTSPEC_CASES_DIR), ${torch_fixtures}
// (where make_fixtures.py wrote, in builds with the torch kind; DISTSPEC_TORCH_FIXTURES in the
// environment wins), ${ranks}, ${rank} (this rank's number), ${tmp} and ${dir} (this rank's
// folder, rank_folder(tmp)) in a line.
std::string expand(std::string line, const std::string& tmp);
std::string join(const std::vector<std::string>& lines);

// This rank's own folder beside the run's prefix `tmp` (in the run's folder): where its files go.
std::string rank_folder(const std::string& tmp);
// Writes `files` into this rank's folder, each rank its own copy (so a file may differ by rank).
void write_files(const std::vector<CaseFile>& files, const std::string& tmp);
// `message` with any rank's folder written as this rank's: the lowest failing rank reports, and
// its message names its own files.
std::string with_own_folder(std::string message, const std::string& tmp);

}  // namespace distspec::testing
