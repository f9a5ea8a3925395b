// The bad-input catalogue: one row per input a user could get wrong (spec files, model files,
// LAMMPS input lines, rank-dependent inputs, atoms too close), each with the part of the error
// message that must reach the user. test_bad_input_catalogue.cpp runs every row on every rank.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace distspec::testing {

struct BadInput {
  std::string name;
  // Files written into the case's folder before the run, as {file name, contents}. Each rank
  // writes its own copy (in its own folder), so a file may differ between ranks.
  std::vector<std::pair<std::string, std::string>> files;
  // LAMMPS input after `plugin load`. Placeholders, in files and commands alike: @DIR@ (this
  // rank's folder of the case), @POT@ (the repository's potentials/), @RANK@ (this rank's number).
  std::string commands;
  std::string expected;  // a part of LAMMPS' error message every rank must report
  int min_ranks = 1;     // rows about ranks that disagree need at least two
};

// GoogleTest names a failing row by its name rather than its bytes.
inline void PrintTo(const BadInput& row, std::ostream* out) { *out << row.name; }

const std::vector<BadInput>& bad_input_catalogue();
// The unaltered inputs the rows start from, with an empty `expected`: each must run cleanly, or
// the rows would fail for a reason other than theirs.
const std::vector<BadInput>& valid_base_inputs();

}  // namespace distspec::testing
