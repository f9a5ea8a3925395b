// A LAMMPS EAM potential file given where a DISTSPEC model file belongs (`pair_coeff * *
// Cu_u3.eam Cu`, as after `pair_style eam`): it is read as the model file it stands for, so an
// EAM user writes no JSON and copies no spec.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "models/json_fields.h"

namespace distspec::models::eam {

// When `bytes` (the file at `path`) is a DYNAMO potential file, the model file it stands for:
// architecture eam, metal units, the file's cutoff and elements (funcfl: the element of its
// atomic number), its format, the file itself as parameters_file and no spec (the
// architecture's default). The format follows the name as LAMMPS' styles name their files
// (*.eam.fs: eam/fs; *.eam.alloy: eam/alloy; *.eam: eam, or setfl where it reads as that); a
// file of such a name that does not parse as its format throws the parser's error (the file's
// line). Another name is taken as the one format it parses as, with no values left over.
// std::nullopt for anything else.
std::optional<Json> model_for_potential_file(std::string_view bytes, const std::string& path);

}  // namespace distspec::models::eam
