#include "distspec/util/canonical_json.h"

namespace distspec {

// nlohmann::json keeps its objects in a std::map, so a round trip through it sorts every level;
// dump() without an indent writes "," and ":" alone, and non-ASCII characters as UTF-8.
std::string canonical_json(const nlohmann::ordered_json& value) { return nlohmann::json::parse(value.dump()).dump(); }

}  // namespace distspec
