// MLIPSpec v2 <-> JSON bytes, as nvalchemi's MLIPSpec.save() / load() write and read them.
// Reading validates everything the native runtime relies on and reports the first problem
// as a distspec::Error with the JSON pointer of the offending value; writing gives the exact
// bytes of json.dumps(spec.to_dict(), indent=2).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "distspec/error.h"
#include "distspec/spec/mlip_spec.h"

namespace distspec {

// Parses and validates spec bytes. Every failure (including malformed JSON, duplicate keys,
// excess nesting) is an Error carrying `file`; no other exception escapes.
MLIPSpec read_mlip_spec(std::string_view bytes, const std::string& file = {});

// Reads the file at `path`; an unreadable file is an Error (spec.io) naming it.
MLIPSpec read_mlip_spec_file(const std::string& path);

// Validates a spec object already parsed, e.g. embedded in a model file: pointers in errors are
// prefixed with `base_pointer` ("/spec" gives "/spec/core/policy/kind"). Parse the enclosing
// file with parse_json_strict to get duplicate-key and depth checks too.
MLIPSpec mlip_spec_from_json(const nlohmann::json& value, const std::string& file = {},
                             const std::string& base_pointer = {});
MLIPSpec mlip_spec_from_json(const nlohmann::ordered_json& value, const std::string& file = {},
                             const std::string& base_pointer = {});

// The canonical JSON object (key order of nvalchemi's to_dict) and its exact bytes. Lists are
// written sorted; shard_fields is left out when it is the default. Throws Error (spec.value)
// for a spec no reader would accept (unknown policy kind, bad op name, unknown shard field,
// an output kind named twice).
nlohmann::ordered_json mlip_spec_to_json(const MLIPSpec& spec);
std::string write_mlip_spec(const MLIPSpec& spec);

}  // namespace distspec
