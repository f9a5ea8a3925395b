// A LAMMPS EAM potential file given where a DISTSPEC model file belongs (`pair_coeff * *
// Cu_u3.eam Cu` after switching from `pair_style eam`): recognised, and answered with the
// model-file lines that wrap it, rather than a JSON syntax error at byte 0.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "distspec/error.h"

namespace distspec::models::eam {

// When `bytes` (the file at `path`) reads as a DYNAMO setfl or funcfl file, the error to throw:
// distspec::Error (id model.potential_file, the file named) saying what the file is, with the
// model file to write beside it in its hint. std::nullopt for anything else.
std::optional<Error> potential_file_hint(std::string_view bytes, const std::string& path);

}  // namespace distspec::models::eam
