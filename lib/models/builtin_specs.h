// The spec files of potentials/specs/ that built-in architectures run under when a model file
// names none, compiled into the library: a model file, or a LAMMPS potential file read as one,
// then needs no spec file beside it. builtin_specs.cpp is generated from the files by CMake
// (lib/models/CMakeLists.txt), so the bytes are the shipped files' own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace distspec::models {

// The text of the shipped spec file `name` ("eam_halo.json"), or nullopt.
std::optional<std::string_view> builtin_spec_text(std::string_view name);

// The names of the compiled-in spec files.
std::vector<std::string> builtin_spec_names();

}  // namespace distspec::models
