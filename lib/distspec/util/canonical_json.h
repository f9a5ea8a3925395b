// One byte form of a JSON value, whatever order and whitespace a file wrote it in: keys sorted
// (by their UTF-8 bytes, which is code-point order), no whitespace, strings in UTF-8 with only
// the escapes JSON requires, numbers in their shortest round-trip form. Python's
// `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` writes the
// same bytes, so a digest of it names a spec alike whether nvalchemi saved it to a file or a
// model file holds it inline (tools/distspec_export/files.py canonical_json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace distspec {

std::string canonical_json(const nlohmann::ordered_json& value);

}  // namespace distspec
