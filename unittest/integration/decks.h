// Small atom decks several integration tests share: fcc crystals of 3 x 3 x 3 cells (108 atoms)
// or 4 x 4 x 4 (256) after the units line, without displacement.
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

// 256 atoms in a 14.5 A box: split 4 ways, each subdomain is thinner than a 5 A cutoff.
inline const std::string copper_256 = R"(
units metal
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 63.546
)";

}  // namespace distspec::testing::decks
