// A JSON reader stricter than nlohmann::json::parse, for files a user hands to the plugin
// (specs, model files). nlohmann keeps the last of two equal keys silently and builds any
// nesting depth; here both are errors, as are numbers out of double range, and every failure
// is a distspec::Error naming where it happened.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace distspec {

// Deepest nesting accepted. A spec needs 6 levels and a model file a few more; the limit keeps
// hostile input (100000 '[') from costing stack in any later recursive walk.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses one JSON document (a UTF-8 BOM is skipped) keeping key order. Throws Error with id
// spec.parse (syntax, truncation, invalid UTF-8, depth, number overflow: the message names the
// byte offset where one is known, the pointer names the innermost open container or value) or
// spec.duplicate_key (pointer of the repeated key). Errors carry `file` when given.
nlohmann::ordered_json parse_json_strict(std::string_view bytes, const std::string& file = {});

// The RFC 6901 reference token for an object key ("~" -> "~0", "/" -> "~1").
std::string json_pointer_token(std::string_view key);

}  // namespace distspec
