// Small atom decks the input-error tests share: fcc crystals of 3 x 3 x 3 cells (108 atoms)
// after the units line, without displacement.
#pragma once

#include <string>

namespace distspec::testing::decks {

inline const std::string argon_108 = R"(
units metal
lattice fcc 5.26
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
mass 1 39.948
)";

inline const std::string copper_108 = R"(
units metal
lattice fcc 3.615
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
mass 1 63.546
)";

}  // namespace distspec::testing::decks
